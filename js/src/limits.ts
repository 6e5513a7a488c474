/** Default nesting limit: a top-level array is at depth 1, so 1024 nested containers are accepted. */
export const DEFAULT_MAX_DEPTH = 1024;
/** Default str/bin/ext/array/map length limit: the format's own maximum (UINT32_MAX). */
export const DEFAULT_MAX_LENGTH = 4294967295;
