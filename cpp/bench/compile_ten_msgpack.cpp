// compile_ten_msgpack.cpp — the same ten structs with msgpack-cxx (MSGPACK_DEFINE), for comparison.
#define MSGPACK_NO_BOOST
#include <msgpack.hpp>
#include <optional>
#include <string>
#include <vector>

struct S0 {
    std::uint32_t id0;
    std::string name0;
    double score0;
    std::vector<int> tags0;
    std::optional<std::string> note0;
    MSGPACK_DEFINE(id0, name0, score0, tags0, note0);
};
struct S1 {
    std::uint32_t id1;
    std::string name1;
    double score1;
    std::vector<int> tags1;
    std::optional<std::string> note1;
    MSGPACK_DEFINE(id1, name1, score1, tags1, note1);
};
struct S2 {
    std::uint32_t id2;
    std::string name2;
    double score2;
    std::vector<int> tags2;
    std::optional<std::string> note2;
    MSGPACK_DEFINE(id2, name2, score2, tags2, note2);
};
struct S3 {
    std::uint32_t id3;
    std::string name3;
    double score3;
    std::vector<int> tags3;
    std::optional<std::string> note3;
    MSGPACK_DEFINE(id3, name3, score3, tags3, note3);
};
struct S4 {
    std::uint32_t id4;
    std::string name4;
    double score4;
    std::vector<int> tags4;
    std::optional<std::string> note4;
    MSGPACK_DEFINE(id4, name4, score4, tags4, note4);
};
struct S5 {
    std::uint32_t id5;
    std::string name5;
    double score5;
    std::vector<int> tags5;
    std::optional<std::string> note5;
    MSGPACK_DEFINE(id5, name5, score5, tags5, note5);
};
struct S6 {
    std::uint32_t id6;
    std::string name6;
    double score6;
    std::vector<int> tags6;
    std::optional<std::string> note6;
    MSGPACK_DEFINE(id6, name6, score6, tags6, note6);
};
struct S7 {
    std::uint32_t id7;
    std::string name7;
    double score7;
    std::vector<int> tags7;
    std::optional<std::string> note7;
    MSGPACK_DEFINE(id7, name7, score7, tags7, note7);
};
struct S8 {
    std::uint32_t id8;
    std::string name8;
    double score8;
    std::vector<int> tags8;
    std::optional<std::string> note8;
    MSGPACK_DEFINE(id8, name8, score8, tags8, note8);
};
struct S9 {
    std::uint32_t id9;
    std::string name9;
    double score9;
    std::vector<int> tags9;
    std::optional<std::string> note9;
    MSGPACK_DEFINE(id9, name9, score9, tags9, note9);
};
int main() {
    int ok = 0;
    { S0 s{}; msgpack::sbuffer b; msgpack::pack(b, s); auto oh = msgpack::unpack(b.data(), b.size()); S0 t; oh.get().convert(t); ok++; }
    { S1 s{}; msgpack::sbuffer b; msgpack::pack(b, s); auto oh = msgpack::unpack(b.data(), b.size()); S1 t; oh.get().convert(t); ok++; }
    { S2 s{}; msgpack::sbuffer b; msgpack::pack(b, s); auto oh = msgpack::unpack(b.data(), b.size()); S2 t; oh.get().convert(t); ok++; }
    { S3 s{}; msgpack::sbuffer b; msgpack::pack(b, s); auto oh = msgpack::unpack(b.data(), b.size()); S3 t; oh.get().convert(t); ok++; }
    { S4 s{}; msgpack::sbuffer b; msgpack::pack(b, s); auto oh = msgpack::unpack(b.data(), b.size()); S4 t; oh.get().convert(t); ok++; }
    { S5 s{}; msgpack::sbuffer b; msgpack::pack(b, s); auto oh = msgpack::unpack(b.data(), b.size()); S5 t; oh.get().convert(t); ok++; }
    { S6 s{}; msgpack::sbuffer b; msgpack::pack(b, s); auto oh = msgpack::unpack(b.data(), b.size()); S6 t; oh.get().convert(t); ok++; }
    { S7 s{}; msgpack::sbuffer b; msgpack::pack(b, s); auto oh = msgpack::unpack(b.data(), b.size()); S7 t; oh.get().convert(t); ok++; }
    { S8 s{}; msgpack::sbuffer b; msgpack::pack(b, s); auto oh = msgpack::unpack(b.data(), b.size()); S8 t; oh.get().convert(t); ok++; }
    { S9 s{}; msgpack::sbuffer b; msgpack::pack(b, s); auto oh = msgpack::unpack(b.data(), b.size()); S9 t; oh.get().convert(t); ok++; }
    return ok == 10 ? 0 : 1;
}
