// compile_ten_mpk.cpp — compile-time probe: mpk.hpp and ten described structs, each packed and
// unpacked once (see cpp/README.md "Benchmark").
#include <mpk.hpp>
#include <optional>
#include <string>
#include <vector>

struct S0 {
    std::uint32_t id0;
    std::string name0;
    double score0;
    std::vector<int> tags0;
    std::optional<std::string> note0;
    MPK_FIELDS(id0, name0, score0, tags0, note0)
};
struct S1 {
    std::uint32_t id1;
    std::string name1;
    double score1;
    std::vector<int> tags1;
    std::optional<std::string> note1;
    MPK_FIELDS(id1, name1, score1, tags1, note1)
};
struct S2 {
    std::uint32_t id2;
    std::string name2;
    double score2;
    std::vector<int> tags2;
    std::optional<std::string> note2;
    MPK_FIELDS(id2, name2, score2, tags2, note2)
};
struct S3 {
    std::uint32_t id3;
    std::string name3;
    double score3;
    std::vector<int> tags3;
    std::optional<std::string> note3;
    MPK_FIELDS(id3, name3, score3, tags3, note3)
};
struct S4 {
    std::uint32_t id4;
    std::string name4;
    double score4;
    std::vector<int> tags4;
    std::optional<std::string> note4;
    MPK_FIELDS(id4, name4, score4, tags4, note4)
};
struct S5 {
    std::uint32_t id5;
    std::string name5;
    double score5;
    std::vector<int> tags5;
    std::optional<std::string> note5;
    MPK_FIELDS(id5, name5, score5, tags5, note5)
};
struct S6 {
    std::uint32_t id6;
    std::string name6;
    double score6;
    std::vector<int> tags6;
    std::optional<std::string> note6;
    MPK_FIELDS(id6, name6, score6, tags6, note6)
};
struct S7 {
    std::uint32_t id7;
    std::string name7;
    double score7;
    std::vector<int> tags7;
    std::optional<std::string> note7;
    MPK_FIELDS(id7, name7, score7, tags7, note7)
};
struct S8 {
    std::uint32_t id8;
    std::string name8;
    double score8;
    std::vector<int> tags8;
    std::optional<std::string> note8;
    MPK_FIELDS(id8, name8, score8, tags8, note8)
};
struct S9 {
    std::uint32_t id9;
    std::string name9;
    double score9;
    std::vector<int> tags9;
    std::optional<std::string> note9;
    MPK_FIELDS(id9, name9, score9, tags9, note9)
};
int main() {
    int ok = 0;
    { S0 s{}; auto b = mpk::pack(s); ok += mpk::try_unpack<S0>(b).ok(); }
    { S1 s{}; auto b = mpk::pack(s); ok += mpk::try_unpack<S1>(b).ok(); }
    { S2 s{}; auto b = mpk::pack(s); ok += mpk::try_unpack<S2>(b).ok(); }
    { S3 s{}; auto b = mpk::pack(s); ok += mpk::try_unpack<S3>(b).ok(); }
    { S4 s{}; auto b = mpk::pack(s); ok += mpk::try_unpack<S4>(b).ok(); }
    { S5 s{}; auto b = mpk::pack(s); ok += mpk::try_unpack<S5>(b).ok(); }
    { S6 s{}; auto b = mpk::pack(s); ok += mpk::try_unpack<S6>(b).ok(); }
    { S7 s{}; auto b = mpk::pack(s); ok += mpk::try_unpack<S7>(b).ok(); }
    { S8 s{}; auto b = mpk::pack(s); ok += mpk::try_unpack<S8>(b).ok(); }
    { S9 s{}; auto b = mpk::pack(s); ok += mpk::try_unpack<S9>(b).ok(); }
    return ok == 10 ? 0 : 1;
}
