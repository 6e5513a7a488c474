"""What the bench scripts say about the machine a run was made on (one place for all of them)."""

import os
import platform


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, else what platform knows, else ''."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def describe():
    """'<n> cores (<model>)', as every report and sidecar prints it."""
    return f"{os.cpu_count()} cores ({cpu_model() or 'unknown CPU'})"
