// mpk/decoder.hpp — mpk::decoder: the core's pull reader (mpk_reader) with typed-decode state.
//
// Codecs read tags from it and report errors through it. The core does every format check
// (limits, depth, declared lengths against the bytes present, in the spec's order, with its
// offsets); the decoder adds errc::type for a value that does not fit the target type, and the
// path to the failing field. Errors are sticky: after the first, every read fails.
#ifndef MPK_CPP_DECODER_HPP
#define MPK_CPP_DECODER_HPP

#include "error.hpp"
#include "stack.hpp"
#include "types.hpp"
#include "writer.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mpk {

class decoder {
public:
    decoder(bytes_view input, const options &opts = options{}) noexcept;
    /// Reads the nodes of a DOM sub-tree (mpk::value::as) instead of bytes: the core's nodes are in
    /// pre-order, the same tokens in the same order as the encoding, so the codecs run unchanged.
    /// Offsets are then node positions in the sub-tree (0: its root). The tree was checked when it
    /// was parsed (limits, UTF-8), so those checks are not repeated. mpk::raw and mpk::ext from a
    /// timestamp need the encoded bytes, which nodes do not keep: they fail and needs_bytes() is
    /// true (value::as then converts from a re-encoding).
    decoder(const mpk_node *root, const options &opts) noexcept;
    decoder(const decoder &) = delete;
    decoder &operator=(const decoder &) = delete;
    ~decoder() { mpk_reader_destroy(&r_); }

    /// Reads the next tag; false on error (the error is kept).
    bool next(mpk_tag &t) noexcept {
        if (MPK__UNLIKELY(node_ != nullptr)) return next_node(t);
        return mpk_reader_next(&r_, &t) != 0;
    }
    /// Skips one whole value without building anything (no recursion).
    bool skip() noexcept {
        if (MPK__UNLIKELY(node_ != nullptr)) return skip_node();
        return mpk_reader_skip(&r_) != 0;
    }
    /// The next head byte, without consuming it; -1 at the end of the input or after an error.
    /// (From nodes: 0xc0 for a nil, 0xa0 for a str, 0x00 for anything else.)
    int peek() const noexcept {
        if (MPK__UNLIKELY(node_ != nullptr)) {
            if (failed() || node_ >= node_end_) return -1;
            return node_->type == MPK_NIL ? 0xc0 : node_->type == MPK_STR ? 0xa0 : 0x00;
        }
        return r_.pos < r_.end ? *r_.pos : -1;
    }
    /// Byte offset of the next token (from nodes: its position in the sub-tree).
    std::size_t offset() const noexcept {
        if (MPK__UNLIKELY(node_ != nullptr)) return static_cast<std::size_t>(node_ - node_root_);
        return mpk_reader_offset(&r_);
    }
    /// True when the whole input was read and no value is open.
    bool at_end() const noexcept {
        if (MPK__UNLIKELY(node_ != nullptr)) return node_ >= node_end_;
        return r_.pos >= r_.end && r_.depth == 0;
    }
    /// True when decoding from DOM nodes (see the constructor).
    bool from_nodes() const noexcept { return node_ != nullptr; }
    /// From nodes: a codec that needs the encoded bytes reports it here (errc::invalid_argument).
    bool needs_bytes(std::size_t offset) {
        needs_bytes_ = true;
        return fail(errc::invalid_argument, offset, "needs the encoded bytes");
    }
    bool needs_bytes() const noexcept { return needs_bytes_; }
    /// Before a codec opens a container (its head at offset()): true while the thread's stack has
    /// more than mpk::stack_margin bytes left; otherwise errc::depth_limit at offset() and false
    /// (mpk/stack.hpp). Every codec that recurses calls it, so a recursive type decoded from
    /// hostile input fails instead of overflowing the stack, whatever limits.depth allows.
    MPK__STACK_INLINE bool enter() {
        if (MPK__LIKELY(detail::stack_has_room())) return true;
        return out_of_stack();
    }
    /// Open containers around the next token.
    std::uint32_t depth() const noexcept { return mpk_reader_depth(&r_); }
    const options &opts() const noexcept { return opts_; }
    bool failed() const noexcept { return r_.error.kind != MPK_OK; }
    /// The input (views point into it).
    const std::uint8_t *input() const noexcept { return r_.start; }

    /// Reports a value that does not fit its target (errc::type at `offset`, its head byte) and
    /// returns false. `found` names what was there ("str", "int 300"), `wanted` the C++ type.
    bool type_error(std::size_t offset, std::string found, std::string_view wanted);
    /// Reports any kind at `offset` with a detail text; returns false.
    bool fail(errc kind, std::size_t offset, std::string detail);

    /// Path segments added by codecs while an error unwinds; they return false after adding.
    bool in_field(std::string_view name) { path_.field(name); return false; }
    bool in_index(std::size_t i) { path_.index(i); return false; }
    bool in_key(std::string_view k) { path_.key(k); return false; }

    /// The error so far (kind errc::ok while fine), its path rooted at `root`.
    error_info error(std::string_view root = {}) const;
    /// Ends one-shot decoding: trailing bytes or an unclosed container are errors.
    bool finish() noexcept {
        if (MPK__UNLIKELY(node_ != nullptr)) {
            if (failed()) return false;
            if (node_ < node_end_) return fail(errc::trailing_bytes, offset(), "");
            return true;
        }
        return mpk_reader_finish(&r_).kind == MPK_OK;
    }
    /// Clears a typed error's path and detail (between messages of mpk::reader).
    void clear_path() { path_.clear(); }

    /// Elements of `size` bytes to reserve for a container that declares `n`, before any is decoded.
    /// The core checked `n` against the bytes left after the container's own head only, so nested
    /// heads can each claim the same bytes: 500 nested vectors each declaring 2^20 elements over
    /// 1 MiB of input reserved 1 MiB apiece. Reservations are charged to one budget per decoder
    /// (1 MiB plus 8 bytes per input byte); once it is spent, containers grow with the elements that
    /// actually arrive, each of which took at least one input byte.
    std::size_t reserve_count(std::uint32_t n, std::size_t size) noexcept {
        std::size_t can = reserve_left_ / (size ? size : 1);
        std::size_t k = n < can ? n : can;
        reserve_left_ -= k * size;
        return k;
    }

    /// Charges `bytes` about to be allocated for the container whose head is at `at` to the
    /// decode's allocation budget (options::max_alloc; by default 1 MiB plus 256 bytes per input
    /// byte). Going over is errc::length_limit at `at`; returns false then. Decoded values can be
    /// far larger than their encoding (a nil is one byte, the std::optional<std::array<char, 4096>>
    /// it fills 4097), so containers charge every element they append.
    bool charge(std::size_t bytes, std::size_t at) {
        if (MPK__LIKELY(bytes <= alloc_left_)) {
            alloc_left_ -= bytes;
            return true;
        }
        return over_budget(at);
    }

    /// How many elements of `size` bytes the allocation budget still covers (charge() them).
    std::size_t affordable(std::size_t size) const noexcept { return alloc_left_ / (size ? size : 1); }

    mpk_reader *c() noexcept { return &r_; }

private:
    /// enter()'s error, out of line.
    MPK__STACK_NOINLINE bool out_of_stack() {
        return fail(errc::depth_limit, offset(),
                    "less than " + std::to_string(stack_margin / 1024) + " KiB of the thread's stack left at depth " +
                        std::to_string(depth()));
    }
    /// charge()'s error, out of line: inlined with it, the message's string building made every
    /// charge a call (22 instructions per vector element, callgrind).
    bool over_budget(std::size_t at) {
        alloc_left_ = 0;
        return fail(errc::length_limit, at, "over the decode's allocation budget of " + std::to_string(alloc_budget_) + " bytes");
    }
    bool next_node(mpk_tag &t) noexcept {
        if (failed()) return false;
        if (node_ >= node_end_) {
            mpk_reader_flag_error(&r_, MPK_ERR_TRUNCATED, offset());
            return false;
        }
        const mpk_node *n = node_++;
        t.type = static_cast<mpk_type>(n->type);
        t.len = n->len;
        t.data = nullptr;
        switch (n->type) {
        case MPK_BOOL: t.v.b = n->v.b; break;
        case MPK_UINT: t.v.u = n->v.u; break;
        case MPK_INT: t.v.i = n->v.i; break;
        case MPK_FLOAT32: t.v.f32 = n->v.f32; break;
        case MPK_FLOAT64: t.v.f64 = n->v.f64; break;
        case MPK_STR: case MPK_BIN: t.data = n->v.data; break;
        case MPK_EXT: t.ext_type = n->ext_type; t.data = n->v.data; break;
        case MPK_TIMESTAMP: t.v.ts.sec = n->v.i; t.v.ts.nsec = n->len; t.len = 0; break;
        default: break;
        }
        return true;
    }
    bool skip_node() noexcept {
        if (failed()) return false;
        if (node_ >= node_end_) {
            mpk_reader_flag_error(&r_, MPK_ERR_TRUNCATED, offset());
            return false;
        }
        node_ += 1 + (node_->type == MPK_ARRAY || node_->type == MPK_MAP ? node_->v.span : 0);
        return true;
    }

    mpk_reader r_;
    options opts_;
    std::string detail_;
    detail::path_builder path_;
    std::size_t reserve_left_ = 0; // bytes reserve_count may still hand out
    std::size_t alloc_budget_ = 0, alloc_left_ = 0; // charge(): the budget and what is left of it
    const mpk_node *node_ = nullptr, *node_root_ = nullptr, *node_end_ = nullptr; // from nodes
    bool needs_bytes_ = false;
};

/// What a tag holds, for error details: "str", "int -3", "array of 2".
std::string describe_tag(const mpk_tag &t);

// ---------------------------------------------------------------------------------------------
// Inline bodies
// ---------------------------------------------------------------------------------------------

inline decoder::decoder(bytes_view input, const options &opts) noexcept : opts_(opts) {
    mpk_reader_init(&r_, input.data(), input.size());
    constexpr std::size_t base = std::size_t{1} << 20, per_byte = 8;
    reserve_left_ = input.size() > (SIZE_MAX - base) / per_byte ? SIZE_MAX : base + per_byte * input.size();
    constexpr std::size_t alloc_per_byte = 256;
    alloc_budget_ = opts.max_alloc ? opts.max_alloc
                    : input.size() > (SIZE_MAX - base) / alloc_per_byte ? SIZE_MAX
                                                                         : base + alloc_per_byte * input.size();
    alloc_left_ = alloc_budget_;
    mpk_reader_set_limits(&r_, &opts_.limits);
    mpk_reader_set_flags(&r_, opts_.strict_utf8 ? unsigned{MPK_FLAG_STRICT_UTF8} : 0u);
}

inline decoder::decoder(const mpk_node *root, const options &opts) noexcept
    : decoder(bytes_view(), opts) { // an empty byte input: the fast paths find no bytes and step aside
    std::size_t count = 1 + (root->type == MPK_ARRAY || root->type == MPK_MAP ? root->v.span : 0);
    node_ = node_root_ = root;
    node_end_ = root + count;
    constexpr std::size_t base = std::size_t{1} << 20, per_node = 256; // every node took an input byte
    alloc_budget_ = opts.max_alloc ? opts.max_alloc : count > (SIZE_MAX - base) / per_node ? SIZE_MAX : base + per_node * count;
    alloc_left_ = alloc_budget_;
    reserve_left_ = base + 8 * count;
}

inline bool decoder::type_error(std::size_t offset, std::string found, std::string_view wanted) {
    std::string d = std::move(found);
    d += " does not fit ";
    d += wanted;
    return fail(errc::type, offset, std::move(d));
}

inline bool decoder::fail(errc kind, std::size_t offset, std::string detail) {
    if (r_.error.kind == MPK_OK) {
        detail_ = std::move(detail);
        path_.clear();
    }
    mpk_reader_flag_error(&r_, static_cast<mpk_error_kind>(kind), offset);
    return false;
}

inline error_info decoder::error(std::string_view root) const {
    error_info e;
    e.kind = static_cast<errc>(r_.error.kind);
    if (e.kind == errc::ok) return e;
    e.offset = r_.error.offset;
    e.path = path_.str(root);
    e.detail = detail_;
    return e;
}

inline std::string describe_tag(const mpk_tag &t) {
    switch (t.type) {
    case MPK_UINT: return "int " + std::to_string(t.v.u);
    case MPK_INT: return "int " + std::to_string(t.v.i);
    case MPK_ARRAY: return "array of " + std::to_string(t.len);
    case MPK_MAP: return "map of " + std::to_string(t.len);
    case MPK_EXT: return "ext " + std::to_string(t.ext_type);
    default: return mpk_type_name(t.type);
    }
}

} // namespace mpk

#endif
