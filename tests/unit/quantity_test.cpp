#include <gtest/gtest.h>

#include "messages/model/resources.hpp"

namespace caldera {
namespace {

TEST(Quantity, ParsesKubernetesSpellings) {
  EXPECT_EQ(parse_quantity("500m"), 500);
  EXPECT_EQ(parse_quantity("2"), 2000);
  EXPECT_EQ(parse_quantity("1.5"), 1500);
  EXPECT_EQ(parse_quantity("1Gi"), 1073741824000LL);
  EXPECT_EQ(parse_quantity("512Mi"), 536870912000LL);
  EXPECT_EQ(parse_quantity("1k"), 1000000);
  EXPECT_EQ(parse_quantity("1e3"), 1000000);
  EXPECT_EQ(parse_quantity("0"), 0);
}

TEST(Quantity, RejectsMalformedNegativeAndHuge) {
  EXPECT_FALSE(parse_quantity(""));
  EXPECT_FALSE(parse_quantity("abc"));
  EXPECT_FALSE(parse_quantity("-1"));
  EXPECT_FALSE(parse_quantity("1Xi"));
  EXPECT_FALSE(parse_quantity("1.2.3"));
  EXPECT_FALSE(parse_quantity("99999999999999999999Ei"));
  EXPECT_FALSE(parse_quantity("1e40"));
}

TEST(Quantity, FormatsShortestExactSpelling) {
  EXPECT_EQ(format_quantity(500), "500m");
  EXPECT_EQ(format_quantity(2000), "2");
  EXPECT_EQ(format_quantity(1073741824000LL), "1Gi");
  EXPECT_EQ(format_quantity(0), "0");
  for (auto text : {"250m", "3", "64Mi", "2Gi"})
    EXPECT_EQ(format_quantity(*parse_quantity(text)), text);
}

TEST(ResourceList, FitsAddsAndSubtracts) {
  ResourceList node{{{"cpu", 2000}, {"memory", 1000}}};
  ResourceList req{{{"cpu", 1500}}};
  EXPECT_TRUE(node.fits(req));
  node.subtract(req);
  EXPECT_FALSE(node.fits(req));
  node.add(req);
  EXPECT_TRUE(node.fits(req));
  EXPECT_FALSE(node.fits(ResourceList{{{"nvidia.com/gpu", 1000}}}));
}

TEST(ResourceList, SumsSaturateInsteadOfWrappingNegative) {
  ResourceList a{{{"cpu", *parse_quantity("5P")}}};  // 5e18 milli: one doubling overflows
  a.add(a);
  a.add(a);
  EXPECT_GT(a.get("cpu"), 0);
  EXPECT_FALSE(ResourceList({{{"cpu", 4000}}}).fits(a));
  EXPECT_FALSE(ResourceList({{{"cpu", 4000}}}).fits(ResourceList{{{"cpu", -1}}}));
}

}  // namespace
}  // namespace caldera
