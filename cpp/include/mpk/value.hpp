// mpk/value.hpp — mpk::document and mpk::value: the dynamic view on the core's DOM.
//
//     mpk::document doc;
//     mpk::value v = doc.parse(bytes);          // one value; the tree lives in doc
//     if (v.type() == mpk::type::map) {
//         std::string_view method = v["method"].as<std::string_view>();
//         auto params = v["params"];            // convert later, once the method is known:
//         auto args = params.as<std::tuple<int, std::string>>();
//     }
//
// Ownership: a value is a pointer to a node of its document. It is valid until that document's
// next parse or its destruction. str/bin/ext payloads are not copied: they point into the input,
// which must outlive the values too. as<T>() converts straight from the sub-tree's nodes with the
// typed codecs (the same rules and errors as mpk::unpack; offsets are node positions in the
// sub-tree); views inside the result point where the nodes' payloads do (the input, or the
// document for JSON). Only a T holding mpk::raw, or mpk::ext read from a timestamp, needs bytes:
// then the sub-tree is re-encoded into a scratch buffer owned by the document, valid until its
// next parse. The document keeps its node array between parses, so parsing one
// message after another allocates only when a message is bigger than all before it.
#ifndef MPK_CPP_VALUE_HPP
#define MPK_CPP_VALUE_HPP

#include "api.hpp"
#include "error.hpp"
#include "types.hpp"
#include "writer.hpp"

#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mpk {

class document;

class value {
public:
    /// An absent value (what a missing key or an index out of range gives): operator bool is
    /// false, type() must not be called.
    value() noexcept = default;
    value(const mpk_node *n, document *doc) noexcept : n_(n), doc_(doc) {}

    explicit operator bool() const noexcept { return n_ != nullptr; }
    mpk::type type() const noexcept { return static_cast<mpk::type>(n_->type); }
    bool is_nil() const noexcept { return n_ && n_->type == MPK_NIL; }
    /// Elements of an array, pairs of a map, bytes of a str/bin/ext; 0 for other types.
    std::size_t size() const noexcept;

    /// Element i of an array (walks i siblings); absent when out of range or not an array.
    /// (Any integer type: a template, so that v[0] is not taken for a null const char *.)
    template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
    value operator[](I i) const noexcept {
        if constexpr (std::is_signed_v<I>)
            if (i < 0) return value();
        return at(static_cast<std::size_t>(i));
    }
    value at(std::size_t i) const noexcept;
    /// The value of the first pair whose key is the str `key`; absent when none or not a map.
    value operator[](std::string_view key) const noexcept;
    value operator[](const char *key) const noexcept { return (*this)[std::string_view(key)]; }

    /// Iteration over an array's elements (an empty range for any other type).
    class iterator;
    iterator begin() const noexcept;
    iterator end() const noexcept;
    /// Iteration over a map's pairs as {key, value} (an empty range for any other type).
    struct member;
    class member_iterator;
    struct member_range;
    member_range items() const noexcept;

    /// Typed reading of scalars without conversion: the value when the type matches, else the
    /// fallback.
    bool get_bool(bool fallback = false) const noexcept { return n_ && n_->type == MPK_BOOL ? n_->v.b != 0 : fallback; }
    std::string_view str() const noexcept;
    bytes_view bin() const noexcept;

    /// Converts this sub-tree to T with the typed codecs (see the header comment).
    template <class T>
    result<T> try_as(const options &opts = options{}) const;
#if MPK_CPP_EXCEPTIONS
    template <class T>
    T as(const options &opts = options{}) const {
        return try_as<T>(opts).value();
    }
#endif

    /// Converts this sub-tree to T, or a default T with `ec` set (no exceptions).
    template <class T>
    T as(std::error_code &ec, const options &opts = options{}) const {
        auto r = try_as<T>(opts);
        ec = r.error().code();
        return r.ok() ? std::move(*r) : T{};
    }

    /// Writes this sub-tree as MessagePack (shortest form).
    void write_to(writer &w) const { mpk_node_write(n_, w.c()); }
    /// The sub-tree as JSON text (the core's mapping, c/README.md "JSON mapping").
    std::string to_json() const;

    /// Deep equality (floats by bits, every NaN equal to every NaN; maps pair by pair in order).
    friend bool operator==(const value &a, const value &b) noexcept {
        if (!a.n_ || !b.n_) return a.n_ == b.n_;
        return mpk_node_equal(a.n_, b.n_) != 0;
    }
    friend bool operator!=(const value &a, const value &b) noexcept { return !(a == b); }

    /// The core node (see c/include/mpk/dom.h).
    const mpk_node *node() const noexcept { return n_; }
    document *doc() const noexcept { return doc_; }

private:
    const mpk_node *n_ = nullptr;
    document *doc_ = nullptr;
};

struct value::member {
    value key, val;
};

struct value::member_range {
    member_iterator begin() const noexcept;
    member_iterator end() const noexcept;
    value map;
};

inline value::member_range value::items() const noexcept { return member_range{*this}; }

class value::iterator {
public:
    iterator(const mpk_node *n, std::uint32_t left, document *doc) noexcept : n_(n), left_(left), doc_(doc) {}
    value operator*() const noexcept { return value(n_, doc_); }
    iterator &operator++() noexcept {
        if (--left_) n_ = mpk_node_next(n_);
        else n_ = nullptr;
        return *this;
    }
    friend bool operator==(const iterator &a, const iterator &b) noexcept { return a.left_ == b.left_; }
    friend bool operator!=(const iterator &a, const iterator &b) noexcept { return a.left_ != b.left_; }

private:
    const mpk_node *n_;
    std::uint32_t left_;
    document *doc_;
};

class value::member_iterator {
public:
    member_iterator(const mpk_node *k, std::uint32_t left, document *doc) noexcept : k_(k), left_(left), doc_(doc) {}
    member operator*() const noexcept { return {value(k_, doc_), value(mpk_node_next(k_), doc_)}; }
    member_iterator &operator++() noexcept {
        if (--left_) k_ = mpk_node_next(mpk_node_next(k_));
        else k_ = nullptr;
        return *this;
    }
    friend bool operator==(const member_iterator &a, const member_iterator &b) noexcept { return a.left_ == b.left_; }
    friend bool operator!=(const member_iterator &a, const member_iterator &b) noexcept { return a.left_ != b.left_; }

private:
    const mpk_node *k_;
    std::uint32_t left_;
    document *doc_;
};

/// Owns a parsed tree (the core's mpk_doc). Not copyable or movable: values point into it.
class document {
public:
    document() noexcept { mpk_doc_init(&doc_); }
    document(const document &) = delete;
    document &operator=(const document &) = delete;
    ~document() { mpk_doc_destroy(&doc_); }

    /// Parses exactly one value filling `input` (bytes after it: errc::trailing_bytes), with the
    /// options' limits and strict UTF-8 flag. Replaces the previous tree.
    result<value> try_parse(bytes_view input, const options &opts = options{});
    /// try_parse with a std::error_code: the root, or an absent value with `ec` set.
    value parse(bytes_view input, std::error_code &ec, const options &opts = options{}) {
        auto r = try_parse(input, opts);
        ec = r.error().code();
        return r.ok() ? *r : value();
    }
    /// Parses JSON text (c/README.md "JSON mapping"); strings are copied into the document.
    result<value> try_parse_json(std::string_view json, const options &opts = options{});
#if MPK_CPP_EXCEPTIONS
    value parse(bytes_view input, const options &opts = options{}) { return try_parse(input, opts).value(); }
    value parse_json(std::string_view json, const options &opts = options{}) {
        return try_parse_json(json, opts).value();
    }
#endif
    /// The root of the last successful parse (absent otherwise).
    value root() noexcept { return value(mpk_doc_root(&doc_), this); }
    mpk_doc *c() noexcept { return &doc_; }

    /// A scratch buffer owned by the document until its next parse (used by value::as).
    std::vector<std::byte> &scratch() { return scratch_.emplace_back(); }

private:
    void prepare(const options &opts) {
        scratch_.clear();
        mpk_doc_set_limits(&doc_, &opts.limits);
        mpk_doc_set_flags(&doc_, opts.strict_utf8 ? unsigned{MPK_FLAG_STRICT_UTF8} : 0u);
    }
    result<value> finish(const mpk_node *root) {
        if (root) return value(root, this);
        mpk_error e = mpk_doc_error(&doc_);
        error_info info;
        info.kind = static_cast<errc>(e.kind);
        info.offset = e.offset;
        return info;
    }
    mpk_doc doc_;
    std::deque<std::vector<std::byte>> scratch_;
};

// ---------------------------------------------------------------------------------------------
// Inline bodies
// ---------------------------------------------------------------------------------------------

inline std::size_t value::size() const noexcept {
    if (!n_) return 0;
    switch (n_->type) {
    case MPK_ARRAY: case MPK_MAP: case MPK_STR: case MPK_BIN: case MPK_EXT: return n_->len;
    default: return 0;
    }
}

inline value value::at(std::size_t i) const noexcept {
    if (!n_ || n_->type != MPK_ARRAY || i >= n_->len) return {};
    return value(mpk_node_at(n_, static_cast<std::uint32_t>(i)), doc_);
}

inline value value::operator[](std::string_view key) const noexcept {
    if (!n_ || n_->type != MPK_MAP) return {};
    const mpk_node *v = mpk_node_map_get(n_, key.data(), key.size());
    return v ? value(v, doc_) : value();
}

inline value::iterator value::begin() const noexcept {
    if (!n_ || n_->type != MPK_ARRAY || n_->len == 0) return end();
    return iterator(n_ + 1, n_->len, doc_);
}
inline value::iterator value::end() const noexcept { return iterator(nullptr, 0, doc_); }

inline value::member_iterator value::member_range::begin() const noexcept {
    const mpk_node *n = map.node();
    if (!n || n->type != MPK_MAP || n->len == 0) return end();
    return member_iterator(n + 1, n->len, map.doc());
}
inline value::member_iterator value::member_range::end() const noexcept {
    return member_iterator(nullptr, 0, map.doc());
}

inline std::string_view value::str() const noexcept {
    if (!n_ || n_->type != MPK_STR) return {};
    return {reinterpret_cast<const char *>(n_->v.data), n_->len};
}

inline bytes_view value::bin() const noexcept {
    if (!n_ || n_->type != MPK_BIN) return {};
    return {n_->v.data, n_->len};
}

inline std::string value::to_json() const {
    writer w;
    mpk_node_to_json(n_, w.c());
    return std::string(w.bytes().chars());
}

template <class T>
result<T> value::try_as(const options &opts) const {
    if (!n_) {
        error_info e;
        e.kind = errc::type;
        e.detail = "absent value";
        return e;
    }
    {
        // straight from the nodes: no re-encoding; views point where the nodes' payloads do
        decoder d(n_, opts);
        T v{};
        if (codec<T>::decode(d, v) && d.finish()) return v;
        if (!d.needs_bytes()) return d.error(detail::root_name<T>());
    }
    // T holds an mpk::raw or an mpk::ext read from a timestamp: those need the encoded bytes, so
    // the sub-tree is re-encoded into a scratch buffer owned by the document and decoded from it
    std::vector<std::byte> &buf = doc_->scratch();
    mpk_writer c;
    mpk_writer_init_alloc(&c, 64, detail::grow_vector, &buf);
    mpk_node_write(n_, &c);
    mpk_writer_finish(&c);
    if (mpk_writer_error(&c) != MPK_OK) {
        error_info e;
        e.kind = static_cast<errc>(mpk_writer_error(&c));
        mpk_writer_destroy(&c);
        return e;
    }
    buf.resize(mpk_writer_size(&c));
    mpk_writer_destroy(&c);
    return try_unpack<T>(bytes_view(buf), opts);
}

inline result<value> document::try_parse(bytes_view input, const options &opts) {
    prepare(opts);
    return finish(mpk_doc_parse(&doc_, input.data(), input.size()));
}

inline result<value> document::try_parse_json(std::string_view json, const options &opts) {
    prepare(opts);
    return finish(mpk_doc_parse_json(&doc_, json.data(), json.size()));
}

/// A value in a typed struct is not supported (it needs a document); use mpk::raw and parse it
/// later, or decode the whole message into a document.
template <>
struct codec<value> {
    static void encode(writer &w, const value &v) { v.write_to(w); }
};

} // namespace mpk

#endif
