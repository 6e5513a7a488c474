// typed.hpp — the typed-value notation of spec/README.md on mpk::value: encode a typed value
// (a node of a JSON document) through mpk::writer, and emit a decoded value in canonical form.
// Shared by the interop driver and the corpus test.
#ifndef MPK_CPP_DRIVER_TYPED_HPP
#define MPK_CPP_DRIVER_TYPED_HPP

#include <mpk.hpp>

#include <charconv>
#include <cmath>
#include <string>
#include <vector>

namespace mpk_typed {

using mpk::value;

inline int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/// Hex text, optionally '-'-separated between bytes.
inline bool hex_decode(std::string_view hex, std::vector<std::byte> &out) {
    out.clear();
    int hi = -1;
    for (char c : hex) {
        if (c == '-' && hi < 0) continue;
        int v = hex_digit(c);
        if (v < 0) return false;
        if (hi < 0) {
            hi = v;
        } else {
            out.push_back(static_cast<std::byte>(hi << 4 | v));
            hi = -1;
        }
    }
    return hi < 0;
}

/// An integer member: a JSON integer or a decimal string, as sign and magnitude.
inline bool integer_of(value v, bool &neg, std::uint64_t &mag) {
    if (!v) return false;
    const mpk_node *n = v.node();
    if (v.type() == mpk::type::uint) { neg = false; mag = n->v.u; return true; }
    if (v.type() == mpk::type::int_) { neg = true; mag = 0 - static_cast<std::uint64_t>(n->v.i); return true; }
    std::string_view s = v.str();
    if (v.type() != mpk::type::str || s.empty()) return false;
    neg = s[0] == '-';
    if (neg) s.remove_prefix(1);
    if (s.empty()) return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), mag);
    if (ec != std::errc() || end != s.data() + s.size()) return false;
    if (neg && mag > static_cast<std::uint64_t>(INT64_MAX) + 1) return false;
    if (neg && mag == 0) neg = false;
    return true;
}

inline bool float_of(value v, double &out) {
    if (!v) return false;
    const mpk_node *n = v.node();
    switch (v.type()) {
    case mpk::type::uint: out = static_cast<double>(n->v.u); return true;
    case mpk::type::int_: out = static_cast<double>(n->v.i); return true;
    case mpk::type::float64: out = n->v.f64; return true;
    case mpk::type::str:
        if (v.str() == "NaN") { out = NAN; return true; }
        if (v.str() == "Infinity") { out = HUGE_VAL; return true; }
        if (v.str() == "-Infinity") { out = -HUGE_VAL; return true; }
        return false;
    default: return false;
    }
}

inline bool encode_typed(value tv, mpk::writer &w);

/// One typed value given as its key and member; false when the request is malformed.
inline bool encode_kv(std::string_view k, value v, mpk::writer &w) {
    bool neg;
    std::uint64_t mag;
    double f;
    std::vector<std::byte> bytes;
    if (k == "nil") {
        if (v.type() != mpk::type::nil) return false;
        w.nil();
    } else if (k == "bool") {
        if (v.type() != mpk::type::boolean) return false;
        w.write(v.get_bool());
    } else if (k == "number") {
        auto t = v.type();
        if (t != mpk::type::uint && t != mpk::type::int_ && t != mpk::type::float64) return false;
        v.write_to(w);
    } else if (k == "int" || k == "bignum") {
        if (!integer_of(v, neg, mag)) return false;
        if (neg) w.write(static_cast<std::int64_t>(0 - mag));
        else w.write(mag);
    } else if (k == "float32") {
        if (!float_of(v, f)) return false;
        w.write(static_cast<float>(f));
    } else if (k == "float64") {
        if (!float_of(v, f)) return false;
        w.write(f);
    } else if (k == "string") {
        if (v.type() != mpk::type::str) return false;
        w.write(v.str());
    } else if (k == "string_hex" || k == "binary") {
        if (v.type() != mpk::type::str || !hex_decode(v.str(), bytes)) return false;
        if (k == "binary") w.write(mpk::bytes_view(bytes));
        else w.write(mpk::bytes_view(bytes).chars());
    } else if (k == "array" || k == "map") {
        if (v.type() != (k == "array" ? mpk::type::array : mpk::type::map)) return false;
        v.write_to(w);
    } else if (k == "ext") {
        if (v.type() != mpk::type::array || v.size() != 2) return false;
        if (!integer_of(v[0], neg, mag) || (neg ? mag > 128 : mag > 127)) return false;
        if (v[1].type() != mpk::type::str || !hex_decode(v[1].str(), bytes)) return false;
        int type = neg ? -static_cast<int>(mag) : static_cast<int>(mag);
        w.write(mpk::ext{static_cast<std::int8_t>(type), mpk::bytes_view(bytes)});
    } else if (k == "timestamp") {
        if (v.type() != mpk::type::array || v.size() != 2) return false;
        if (!integer_of(v[0], neg, mag)) return false;
        if (neg ? mag > static_cast<std::uint64_t>(INT64_MAX) + 1 : mag > static_cast<std::uint64_t>(INT64_MAX))
            return false;
        bool nsec_neg;
        std::uint64_t nsec;
        if (!integer_of(v[1], nsec_neg, nsec)) return false;
        if (nsec_neg || nsec > 999999999u) { // well formed, but no timestamp can carry it
            w.fail(mpk::errc::invalid_timestamp, "nsec out of range");
            return true;
        }
        std::int64_t sec = neg ? static_cast<std::int64_t>(0 - mag) : static_cast<std::int64_t>(mag);
        w.write(mpk::timestamp{sec, static_cast<std::uint32_t>(nsec)});
    } else if (k == "typed_array") {
        if (v.type() != mpk::type::array) return false;
        w.array(static_cast<std::uint32_t>(v.size()));
        for (value e : v)
            if (!encode_typed(e, w)) return false;
    } else if (k == "typed_map") {
        if (v.type() != mpk::type::array) return false;
        w.map(static_cast<std::uint32_t>(v.size()));
        for (value pair : v) {
            if (pair.type() != mpk::type::array || pair.size() != 2) return false;
            if (!encode_typed(pair[0], w) || !encode_typed(pair[1], w)) return false;
        }
    } else {
        return false;
    }
    return true;
}

inline bool encode_typed(value tv, mpk::writer &w) {
    if (!tv || tv.type() != mpk::type::map || tv.size() != 1) return false;
    for (auto m : tv.items()) {
        if (m.key.type() != mpk::type::str) return false;
        return encode_kv(m.key.str(), m.val, w);
    }
    return false;
}

// ---- canonical output -----------------------------------------------------------------------

inline void emit_hex(std::string &out, const std::uint8_t *p, std::size_t n) {
    static const char digits[] = "0123456789abcdef";
    out += '"';
    for (std::size_t i = 0; i < n; i++) {
        out += digits[p[i] >> 4];
        out += digits[p[i] & 15];
    }
    out += '"';
}

inline void emit_string(std::string &out, std::string_view s) {
    static const char digits[] = "0123456789abcdef";
    out += '"';
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c < 0x20) {
            out += "\\u00";
            out += digits[c >> 4];
            out += digits[c & 15];
        } else {
            out += ch;
        }
    }
    out += '"';
}

inline void emit_integer(std::string &out, bool neg, std::uint64_t mag) {
    bool quoted = mag > 9007199254740991ull;
    if (quoted) out += '"';
    if (neg) out += '-';
    out += std::to_string(mag);
    if (quoted) out += '"';
}

inline void emit_double(std::string &out, double v) {
    if (std::isnan(v)) { out += "\"NaN\""; return; }
    if (std::isinf(v)) { out += v > 0 ? "\"Infinity\"" : "\"-Infinity\""; return; }
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v); // shortest round trip
    (void)ec;
    std::string_view s(buf, static_cast<std::size_t>(end - buf));
    out += s;
    if (s.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

inline void emit_scalar(value v, std::string &out) {
    const mpk_node *n = v.node();
    switch (v.type()) {
    case mpk::type::nil: out += "{\"nil\":null}"; break;
    case mpk::type::boolean: out += n->v.b ? "{\"bool\":true}" : "{\"bool\":false}"; break;
    case mpk::type::uint: out += "{\"int\":"; emit_integer(out, false, n->v.u); out += '}'; break;
    case mpk::type::int_: out += "{\"int\":"; emit_integer(out, true, 0 - static_cast<std::uint64_t>(n->v.i)); out += '}'; break;
    case mpk::type::float32: out += "{\"float32\":"; emit_double(out, static_cast<double>(n->v.f32)); out += '}'; break;
    case mpk::type::float64: out += "{\"float64\":"; emit_double(out, n->v.f64); out += '}'; break;
    case mpk::type::str:
        if (mpk_utf8_valid(n->v.data, n->len)) {
            out += "{\"string\":";
            emit_string(out, v.str());
        } else {
            out += "{\"string_hex\":";
            emit_hex(out, n->v.data, n->len);
        }
        out += '}';
        break;
    case mpk::type::bin: out += "{\"binary\":"; emit_hex(out, n->v.data, n->len); out += '}'; break;
    case mpk::type::ext:
        out += "{\"ext\":[" + std::to_string(n->ext_type) + ",";
        emit_hex(out, n->v.data, n->len);
        out += "]}";
        break;
    case mpk::type::timestamp: {
        mpk_timestamp ts = mpk_node_timestamp(n);
        out += "{\"timestamp\":[";
        emit_integer(out, ts.sec < 0, ts.sec < 0 ? 0 - static_cast<std::uint64_t>(ts.sec) : static_cast<std::uint64_t>(ts.sec));
        out += "," + std::to_string(ts.nsec) + "]}";
        break;
    }
    case mpk::type::array: out += "{\"typed_array\":["; break;
    case mpk::type::map: out += "{\"typed_map\":["; break;
    }
}

/// Iterative (an explicit stack), so a deeply nested value cannot exhaust the C++ stack.
inline void emit(value root, std::string &out) {
    struct frame {
        std::uint64_t left;
        bool is_map;
    };
    std::vector<frame> stack;
    const mpk_node *n = root.node();
    const mpk_node *end = mpk_node_next(n);
    for (; n < end; n++) {
        if (!stack.empty() && stack.back().is_map && (stack.back().left & 1) == 0) out += '[';
        value v(n, root.doc());
        emit_scalar(v, out);
        if (mpk_node_is_container(n)) {
            if (n->len) {
                bool is_map = n->type == MPK_MAP;
                stack.push_back({is_map ? 2 * std::uint64_t{n->len} : n->len, is_map});
                continue;
            }
            out += "]}";
        }
        while (!stack.empty()) {
            frame &f = stack.back();
            f.left--;
            if (f.is_map && (f.left & 1) == 0) out += ']';
            if (f.left) {
                out += ',';
                break;
            }
            out += "]}";
            stack.pop_back();
        }
    }
}

} // namespace mpk_typed

#endif
