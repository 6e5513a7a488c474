// An RPC server's read path with the non-throwing API, built with -fno-exceptions: read
// [method, params] with params kept as mpk::raw, convert params once the method is known, and
// answer every error with its kind, offset and path. Exits 0 when every check holds.
#include <mpk.hpp>

#include <cstdio>
#include <string>

#if MPK_CPP_EXCEPTIONS
#error "this example must be built with -fno-exceptions"
#endif

struct AddParams {
    int a = 0, b = 0;
    MPK_FIELDS_MAP(a, b)
};
struct Call {
    std::string_view method;
    mpk::raw params;
    MPK_FIELDS(method, params)
};

static int handle(mpk::bytes_view message, std::string &answer) {
    auto call = mpk::try_unpack<Call>(message);
    if (!call) {
        answer = call.error().message();
        return 1;
    }
    if (call->method == "add") {
        auto p = mpk::try_unpack<AddParams>(call->params.bytes);
        if (!p) {
            answer = p.error().message();
            return 1;
        }
        answer = std::to_string(p->a + p->b);
        return 0;
    }
    answer = "unknown method";
    return 1;
}

int main() {
    int failures = 0;
    auto check = [&](bool ok, const char *what) {
        if (!ok) {
            std::printf("FAILED: %s\n", what);
            failures++;
        }
    };
    struct Wire {
        std::string method;
        AddParams params;
        MPK_FIELDS(method, params)
    };
    auto good = mpk::try_pack(Wire{"add", {2, 40}});
    check(good.ok(), "pack");
    std::string answer;
    check(handle(*good, answer) == 0 && answer == "42", "add answers 42");

    struct BadWire {
        std::string method;
        std::map<std::string, std::string> params;
        MPK_FIELDS(method, params)
    };
    auto bad = mpk::try_pack(BadWire{"add", {{"a", "two"}}});
    check(handle(*bad, answer) == 1, "a str where an int belongs is refused");
    // offsets count from the start of the bytes given to try_unpack: here, the params' own bytes
    check(answer == "type at byte 3 in AddParams.a: str does not fit std::int32_t", answer.c_str());

    std::byte cut[] = {std::byte{0x92}, std::byte{0xa3}};
    check(handle(mpk::bytes_view(cut, 2), answer) == 1 && answer == "truncated at byte 0", answer.c_str());

    std::byte small[4];
    auto full = mpk::try_pack_into(small, sizeof small, Wire{"add", {1, 2}});
    check(!full.ok() && full.error().kind == mpk::errc::buffer_full, "buffer_full");

    // the std::error_code overloads, without exceptions
    std::error_code ec;
    mpk::unpack<Wire>(mpk::bytes_view(cut, 2), ec);
    check(ec == mpk::errc::truncated && ec.message() == "truncated", "error_code truncated");
    auto wire = mpk::unpack<Wire>(*good, ec);
    check(!ec && wire.params.b == 40, "error_code cleared on success");

    std::printf("%s\n", failures ? "rpc_noexcept: FAILED" : "rpc_noexcept: ok");
    return failures ? 1 : 0;
}
