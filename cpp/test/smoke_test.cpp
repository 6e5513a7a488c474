#include <gtest/gtest.h>
#include <mpk.hpp>

struct Test1 {
    unsigned a = 1, b = 2;
    MPK_FIELDS(a, b)
};
struct Test2 {
    int a = -1, b = -2;
    MPK_FIELDS(a, b)
};
struct Test3 {
    std::vector<std::byte> data = std::vector<std::byte>(8192, std::byte{0x55});
    MPK_FIELDS(data)
};
struct Test4 {
    Test1 test1; Test2 test2; Test3 test3;
    MPK_FIELDS(test1, test2, test3)
};

TEST(Smoke, Test4) {
    Test4 t;
    auto bytes = mpk::pack(t);
    auto back = mpk::unpack<Test4>(bytes);
    EXPECT_EQ(back.test1.b, 2u);
    EXPECT_EQ(back.test3.data.size(), 8192u);
}
