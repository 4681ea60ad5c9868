#include <gtest/gtest.h>

#include "perflow/study/config_schema.hpp"

namespace perflow::study {
namespace {

TEST(ConfigPointer, PlacesAConfigCanHold) {
  for (const char* pointer :
       {"/pipeline/stages", "/pipeline/order/0", "/costs/offload/ratio",
        "/device_types/H100/memory", "/placement/0/stages", "/placement/-", "/model/preset",
        "/network/inter_node/bandwidth", "/description", "/costs/overrides/1/stages/0"}) {
    EXPECT_EQ(config_pointer_problem(pointer), "") << pointer;
  }
}

TEST(ConfigPointer, SaysWhyAPointerNamesNothing) {
  EXPECT_EQ(config_pointer_problem("/pipline/stages"),
            "'pipline' is not a key of the config; did you mean 'pipeline'?");
  EXPECT_EQ(config_pointer_problem("/pipeline/stagse"),
            "'stagse' is not a key of /pipeline; did you mean 'stages'?");
  EXPECT_EQ(config_pointer_problem("/pipeline/stages/2"),
            "/pipeline/stages holds a value, not an object: it has no member '2'");
  EXPECT_EQ(config_pointer_problem("/placement/first/stages"),
            "/placement is an array: expected an index, got 'first'");
  EXPECT_EQ(config_pointer_problem("/zzz"), "'zzz' is not a key of the config");
  // "~1" is a '/' inside a key: no config key has one.
  EXPECT_EQ(config_pointer_problem("/pipeline~1stages"),
            "'pipeline/stages' is not a key of the config");
}

}  // namespace
}  // namespace perflow::study
