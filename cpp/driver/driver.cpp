// driver.cpp — the interop driver spec/drivers/cpp (spec/README.md "Drivers"): JSON Lines
// requests on stdin, one answer line each on stdout. Requests are read with mpk::document's JSON
// parser and walked as mpk::value; encodes go through mpk::writer and the typed codecs
// (mpk::timestamp, mpk::ext, std::string_view, mpk::bytes_view, integers, floats); decodes
// through mpk::document, answered in canonical form; stream requests through mpk::stream (feed,
// next until need_more, end).
#include <mpk.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "typed.hpp"

namespace {

using mpk::value;
using namespace mpk_typed;

bool set_limits(value obj, mpk_limits &l) {
    if (obj.type() != mpk::type::map) return false;
    for (auto m : obj.items()) {
        if (m.val.type() != mpk::type::uint || m.val.node()->v.u > 0xffffffffu) return false;
        auto n = static_cast<std::uint32_t>(m.val.node()->v.u);
        std::string_view k = m.key.str();
        if (k == "depth") l.depth = n;
        else if (k == "str") l.str = n;
        else if (k == "bin") l.bin = n;
        else if (k == "ext") l.ext = n;
        else if (k == "array") l.array = n;
        else if (k == "map") l.map = n;
        else return false;
    }
    return true;
}

// {"stream": hex, "cuts": [...]}: the bytes fed to an mpk::stream in chunks split at the cuts,
// each followed by next() until need_more; then end(). The values taken, and the error if any.
std::string stream_answer(value root, value hex) {
    static const std::string bad = "{\"error\":\"bad_request\"}";
    mpk::options opts;
    if (value l = root["limits"]; l && !set_limits(l, opts.limits)) return bad;
    if (value s = root["strict_utf8"]; s) {
        if (s.type() != mpk::type::boolean) return bad;
        opts.strict_utf8 = s.get_bool();
    }
    std::vector<std::byte> bytes;
    if (!hex_decode(hex.str(), bytes)) return bad;
    std::vector<std::size_t> cuts;
    if (value c = root["cuts"]; c) {
        if (c.type() != mpk::type::array) return bad;
        for (value at : c) {
            if (at.type() != mpk::type::uint || at.node()->v.u > bytes.size()) return bad;
            cuts.push_back(static_cast<std::size_t>(at.node()->v.u));
        }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.push_back(bytes.size());
    mpk::stream s(opts);
    std::string out = "{\"values\":[";
    bool first = true, failed = false;
    std::size_t at = 0;
    for (std::size_t end : cuts) {
        if (end <= at) continue;
        s.feed(mpk::bytes_view(bytes.data() + at, end - at));
        at = end;
        value v;
        mpk::stream::status st;
        while ((st = s.next(v)) == mpk::stream::status::value) {
            if (!first) out += ',';
            first = false;
            emit(v, out);
        }
        if (st == mpk::stream::status::error) {
            failed = true;
            break;
        }
    }
    if (!failed && s.end()) return out + "]}";
    auto e = s.error();
    return out + "],\"error\":\"" + mpk::name(e.kind) + "\",\"offset\":" + std::to_string(e.offset) + "}";
}

std::string answer(mpk::document &request, mpk::document &decoded, mpk::writer &packed, std::string_view line) {
    static const std::string bad = "{\"error\":\"bad_request\"}";
    mpk::options json_opts;
    json_opts.limits.depth = 20000; // typed values nest two JSON levels per MessagePack level
    auto root = request.try_parse_json(line, json_opts);
    if (!root) return bad;
    value enc = (*root)["encode"], dec = (*root)["decode"];
    if (value st = (*root)["stream"]; st && st.type() == mpk::type::str) return stream_answer(*root, st);
    std::string out;
    if (enc) {
        packed.reset();
        if (!encode_typed(enc, packed)) return bad;
        if (!packed.ok()) return std::string("{\"error\":\"") + mpk::name(packed.error().kind) + "\"}";
        out = "{\"hex\":";
        emit_hex(out, packed.bytes().udata(), packed.size());
        out += '}';
        return out;
    }
    if (dec && dec.type() == mpk::type::str) {
        mpk::options opts;
        if (value l = (*root)["limits"]; l && !set_limits(l, opts.limits)) return bad;
        if (value s = (*root)["strict_utf8"]; s) {
            if (s.type() != mpk::type::boolean) return bad;
            opts.strict_utf8 = s.get_bool();
        }
        std::vector<std::byte> bytes;
        if (!hex_decode(dec.str(), bytes)) return bad;
        auto v = decoded.try_parse(bytes, opts);
        if (!v) {
            return std::string("{\"error\":\"") + mpk::name(v.error().kind) + "\",\"offset\":" +
                   std::to_string(v.error().offset) + "}";
        }
        out = "{\"value\":";
        emit(*v, out);
        out += '}';
        return out;
    }
    return bad;
}

} // namespace

int main() {
    std::ios::sync_with_stdio(false);
    mpk::document request, decoded;
    mpk::writer packed(4096);
    std::string line;
    while (std::getline(std::cin, line)) {
        while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
        if (line.empty()) continue;
        std::string a = answer(request, decoded, packed, line);
        a += '\n';
        std::fwrite(a.data(), 1, a.size(), stdout);
        std::fflush(stdout);
    }
    return 0;
}
