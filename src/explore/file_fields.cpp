// The sweep and search file formats, one entry per key (docs/search-and-sweeps.md says the
// same in prose).
#include "detail/file_fields.hpp"

#include <stdexcept>
#include <string>

#include "perflow/model/device_spec.hpp"
#include "perflow/model/training.hpp"

namespace perflow::explore::detail {
namespace {

using K = FileFieldKind;

constexpr FileField kRangeFields[] = {
    {.name = "from", .kind = K::Number, .description = "the first value", .required = true},
    {.name = "to",
     .kind = K::Number,
     .description = "the last value, included when a step lands on it",
     .required = true},
    {.name = "step",
     .kind = K::Number,
     .description = "added each time: not 0, and going from `from` towards `to`",
     .required = true},
};

}  // namespace

constinit const FileSection kRangeSection{
    "range", "{\"from\": a, \"to\": b, \"step\": s}: a, a+s, ... up to b; integers stay integers",
    kRangeFields};

namespace {

constexpr FileField kSweepFields[] = {
    {.name = "$schema",
     .kind = K::Text,
     .description = "the schema an editor validates this file against (ignored)"},
    {.name = "description", .kind = K::Text, .description = "free text"},
    {.name = "base",
     .kind = K::SweepBase,
     .description = "the config every run starts from: a config object, or the path of a "
                    "config file (relative to the sweep file)",
     .required = true},
    {.name = "axes",
     .kind = K::Axes,
     .description = "POINTER: [values...] or {\"from\": a, \"to\": b, \"step\": s}; each "
                    "pointer is set as --set sets it; the first axis is the outermost",
     .required = true,
     .section = &kRangeSection},
    {.name = "zip",
     .kind = K::Zip,
     .description = "groups of axes that move together (as many values each), one axis at "
                    "the place of its first pointer"},
};

constexpr FileField kGpuFields[] = {
    {.name = "count",
     .kind = K::Integer,
     .description = "how many GPUs of this type the cluster has",
     .min = 1,
     .max = kMaxSearchValue,
     .required = true},
};

}  // namespace

constinit const FileSection kSweepSection{
    "sweep", "a perflow sweep file: a base config and the axes varied over it", kSweepFields};
constinit const FileSection kGpuSection{
    "gpu_type", "a GPU type: a config's device type (preset, memory, ...) and its count",
    kGpuFields};

namespace {

constexpr FileField kClusterFields[] = {
    {.name = "gpus",
     .kind = K::Gpus,
     .description = "GPU types by name, e.g. {\"H100\": {\"preset\": \"h100-sxm\", \"count\": "
                    "64}}; plans place them in the order written first",
     .required = true,
     .section = &kGpuSection},
    {.name = "devices_per_node",
     .kind = K::Integer,
     .description = "GPUs per node (default 8): tensor parallelism stays within a node",
     .min = 1,
     .max = kMaxSearchValue},
};

constexpr FileField kSpaceFields[] = {
    {.name = "schedules",
     .kind = K::Schedules,
     .description = "schedules to try (default 1f1b, interleaved-1f1b, zb-h1, zbv); a "
                    "schedule that fixes its chunks uses them"},
    {.name = "pipeline",
     .kind = K::Integers,
     .description = "pipeline depths (default: 1 to 32, at most the layers)",
     .min = 1,
     .max = kMaxSearchValue},
    {.name = "tensor_parallel",
     .kind = K::Integers,
     .description = "tensor-parallel degrees (default: powers of two up to devices_per_node "
                    "dividing the heads)",
     .min = 1,
     .max = kMaxSearchValue},
    {.name = "micro_batch_size",
     .kind = K::Integers,
     .description = "micro-batch sizes (default: the base's training.micro_batch_size, else "
                    "1 and 2)",
     .min = 1,
     .max = kMaxSearchValue},
    {.name = "chunks",
     .kind = K::Integers,
     .description = "chunk counts for schedules whose count is free (default 2 and 4)",
     .min = 1,
     .max = kMaxSearchValue},
    {.name = "recompute",
     .kind = K::Names,
     .description = "recomputation modes (default: the base's training.recompute, else all "
                    "three); given, a base with costs.recompute is refused",
     .choices = kRecomputeChoices},
    {.name = "offload",
     .kind = K::Shares,
     .description = "shares of microbatches whose activations go to host memory, each "
                    "plan's costs.offload.ratio (default: the base's offloading); above 0 "
                    "needs a host link"},
    {.name = "layers",
     .kind = K::Names,
     .description = "layer splits (default: even, and fastest on a mixed cluster)",
     .choices = kLayerSplits},
    {.name = "expert_parallel",
     .kind = K::Integers,
     .description = "expert-parallel degrees, each dividing the plan's data parallelism "
                    "(default 1, and for a MoE model every power of two dividing its experts)",
     .min = 1,
     .max = kMaxSearchValue},
    {.name = "context_parallel",
     .kind = K::Integers,
     .description = "context-parallel degrees, each splitting the sequence into 2 x cp "
                    "chunks (default 1); a plan's GPUs are pp x tp x cp x dp",
     .min = 1,
     .max = kMaxSearchValue},
    {.name = "precision",
     .kind = K::Names,
     .description = "training precisions (default: the base's training.precision, else "
                    "bf16); a plan whose GPUs lack one is pruned",
     .choices = model::kPrecisionNames},
    {.name = "fsdp",
     .kind = K::Names,
     .description = "FSDP modes, each plan's parallelism.fsdp (default: none); \"hsdp\" "
                    "once per fsdp_shard_size; a plan whose data x context ranks a mode cannot "
                    "shard over is pruned",
     .choices = model::kFsdpNames},
    {.name = "fsdp_shard_size",
     .kind = K::Integers,
     .description = "with \"hsdp\" in fsdp: the shard group sizes to try, each dividing the "
                    "plan's data x context ranks",
     .min = 2,
     .max = kMaxSearchValue},
};

constexpr FileField kConstraintsFields[] = {
    {.name = "use_all_gpus",
     .kind = K::Boolean,
     .description = "true (default): every GPU runs; false: at most the cluster"},
    {.name = "memory",
     .kind = K::Size,
     .description = "a cap below the GPUs' capacity (bytes or \"72GB\"): it becomes each "
                    "device type's memory",
     .min = 1},
};

}  // namespace

constinit const FileSection kClusterSection{"cluster", "the GPUs a plan may use", kClusterFields};
constinit const FileSection kSpaceSection{
    "space", "the values the search tries; each key left out takes its default", kSpaceFields};
constinit const FileSection kConstraintsSection{"constraints", "what every plan must satisfy",
                                                kConstraintsFields};

namespace {

constexpr FileField kSearchFields[] = {
    {.name = "$schema",
     .kind = K::Text,
     .description = "the schema an editor validates this file against (ignored)"},
    {.name = "description", .kind = K::Text, .description = "free text"},
    {.name = "base",
     .kind = K::SearchBase,
     .description = "the config every plan shares: model and training (with "
                    "global_batch_size); the search sets pipeline, parallelism, device_types "
                    "and placement",
     .required = true},
    {.name = "cluster",
     .kind = K::Object,
     .description = "the GPUs a plan may use",
     .required = true,
     .section = &kClusterSection},
    {.name = "space",
     .kind = K::Object,
     .description = "the values the search tries",
     .section = &kSpaceSection},
    {.name = "constraints",
     .kind = K::Object,
     .description = "what every plan must satisfy",
     .section = &kConstraintsSection},
    {.name = "top",
     .kind = K::Integer,
     .description = "how many best plans to print (default 10)",
     .min = 1,
     .max = kMaxSearchValue},
};

}  // namespace

constinit const FileSection kSearchSection{
    "search", "a perflow search file: a model, a cluster and what may vary", kSearchFields};

std::vector<std::string_view> FileSection::keys() const {
  std::vector<std::string_view> out;
  for (const FileField& f : fields) out.push_back(f.name);
  return out;
}

const FileField& FileSection::field(std::string_view field_name) const {
  for (const FileField& f : fields) {
    if (f.name == field_name) return f;
  }
  throw std::logic_error("file table: no field '" + std::string(field_name) + "' in " +
                         std::string(name));
}

}  // namespace perflow::explore::detail
