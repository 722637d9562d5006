// SPDX-License-Identifier: MIT
#include "sim/config/ExperimentSpec.hpp"

#include "models/json/ScheduleJson.hpp"
#include "sim/config/BundledModels.hpp"
#include "sim/config/OnnxModel.hpp"
#include "sim/config/Schema.hpp"
#include "workloads/graph/Activation.hpp"

#include <fmt/format.h>

#include <array>
#include <map>
#include <string_view>

namespace ipusim {
namespace {

using json = nlohmann::json;
using config::LoadedConfig;
using config::OnnxBlock;
using config::OnnxSource;

Precision precisionOf(const json& v) { return v == "fp16" ? Precision::FP16 : Precision::FP32; }

StrategySpec strategyOf(const json& s)
{
    StrategySpec spec;
    const std::string kind = s.at("kind");
    spec.kind = kind == "pipelined" ? StrategyKind::Pipelined
                : kind == "sharded" ? StrategyKind::Sharded
                : kind == "phased"  ? StrategyKind::Phased : StrategyKind::Single;
    const std::string schedule = s.at("schedule");
    spec.schedule = schedule == "interleaved" ? PipelineSchedule::Interleaved
                    : schedule == "sequential" ? PipelineSchedule::Sequential : PipelineSchedule::Grouped;
    spec.parallelPhases = s.at("phased") == "parallel";
    spec.replicas = s.at("replicas");
    spec.replicatedTensorSharding = s.at("replicated_tensor_sharding");
    if (s.contains("stages")) {
        spec.stages.emplace();
        for (const auto& st : s.at("stages"))
            spec.stages->push_back({st.at("blocks").get<std::vector<std::string>>(), st.at("ipu").get<uint32_t>()});
    }
    if (s.contains("block_ipus"))
        spec.blockIpus = s.at("block_ipus").get<std::map<std::string, uint32_t>>();
    return spec;
}

/** The `/workload` keys every model shares, with their cross-field rules. */
WorkloadOptions optionsOf(const LoadedConfig& cfg, const SystemParams& system, const RunSpec& run)
{
    const json& w = cfg.doc.at("workload");
    WorkloadOptions o;
    o.train = w.at("mode") == "train";
    o.microBatch = w.at("micro_batch");
    o.gradientAccumulation = run.gradientAccumulation;
    o.deviceIterations = run.deviceIterations;
    o.activations = precisionOf(w.at("precision"));
    o.partials = precisionOf(w.at("partials"));
    if (o.activations == Precision::FP32 && o.partials == Precision::FP16)
        cfg.fail("/workload/partials", "expected \"fp32\": fp32 activations accumulate in fp32 partials");
    if (!o.train && run.gradientAccumulation != 1)
        cfg.fail("/run/gradient_accumulation", "expected 1: inference has no gradient accumulation");
    o.offloadOptimizer = w.at("offload_optimizer");
    o.ioTiles = w.at("io_tiles");
    o.prefetchDepth = w.at("prefetch_depth");
    o.recompute = w.at("recompute") == "checkpoints";
    if (o.recompute && !o.train)
        cfg.fail("/workload/recompute", "expected \"none\": inference keeps no activations for a backward pass");
    if (o.ioTiles != 0 && (o.ioTiles < 32 || o.ioTiles % 2 != 0 || o.ioTiles >= system.ipu.tiles))
        cfg.fail("/workload/io_tiles", fmt::format("expected 0 or an even number from 32 to 192 below the {} tiles, found {}",
                                                   system.ipu.tiles, o.ioTiles));
    if (o.offloadOptimizer && !o.train)
        cfg.fail("/workload/offload_optimizer", "expected false: inference has no optimizer state");
    const std::string mode = w.at("output_mode");
    o.outputMode = mode == "all"       ? OutputMode::All
                   : mode == "final"   ? OutputMode::Final
                   : mode == "sum"     ? OutputMode::Sum
                   : mode == "every_n" ? OutputMode::EveryN
                   : o.train           ? OutputMode::Final : OutputMode::All;
    o.outputPeriod = o.outputMode == OutputMode::EveryN ? w.at("output_return_period").get<uint32_t>() : 1;
    o.strategy = strategyOf(w.at("strategy"));
    if (const std::string input = w.value("input_dtype", std::string("model")); input != "model")
        o.inputType = input == "uint8" ? Precision::U8 : precisionOf(input);
    return o;
}

WorkloadSpec decodeSchedule(const LoadedConfig& cfg, const SystemParams& system, const RunSpec&)
{
    const json& w = cfg.doc.at("workload");
    // Steps are checked one by one against their own definition, so an error names the step's
    // form rather than every alternative of a oneOf.
    const StepCheck check = [&](const json& step, const std::string& op, const std::string& pointer) {
        config::Schema::instance().validate(step, "/definitions/steps/" + op, pointer,
                                            [&](const std::string& p) { return cfg.fileOf(p); });
    };
    return ScheduleSpec{scheduleFromJson(w, "/workload", system, cfg, check)};
}

/** BERT places its layers by count; other models place blocks. */
void rejectLayerCounts(const LoadedConfig& cfg, const char* model)
{
    for (const char* key : {"layers_per_ipu", "heads_ipu"})
        if (cfg.doc.at("workload").at("strategy").contains(key))
            cfg.fail(std::string("/workload/strategy/") + key,
                     fmt::format("expected only for BERT: {} blocks are placed with \"stages\" or \"block_ipus\"", model));
}

MemoryProportion memoryProportionOf(const json& w)
{
    if (!w.contains("available_memory_proportion"))
        return {};
    const json& amp = w.at("available_memory_proportion");
    if (amp.is_number())
        return amp.get<double>();
    return amp.get<std::vector<double>>();
}

WorkloadSpec decodeMnist(const LoadedConfig& cfg, const SystemParams& system, const RunSpec& run)
{
    rejectLayerCounts(cfg, "MNIST's");
    return MnistSpec{optionsOf(cfg, system, run), memoryProportionOf(cfg.doc.at("workload"))};
}

BertShape bertShapeOf(const LoadedConfig& cfg)
{
    const json& w = cfg.doc.at("workload");
    const json& model = w.at("model");
    BertShape s;
    s.layers = model.at("layers");
    s.hidden = model.at("hidden");
    s.heads = model.at("heads");
    s.ffn = model.at("ffn");
    s.vocab = model.at("vocab_size");
    s.vocabPadding = model.at("vocab_padding");
    s.maxPositions = model.at("max_positions");
    s.typeVocab = model.at("type_vocab");
    s.sequence = w.at("sequence_length");
    s.maxPredictions = w.at("max_predictions");
    s.embeddingSerialization = w.at("embedding_serialization");
    if (s.hidden % s.heads != 0)
        cfg.fail("/workload/model/heads", fmt::format("expected a divisor of the hidden size {}, found {}", s.hidden, s.heads));
    if (s.sequence > s.maxPositions)
        cfg.fail("/workload/sequence_length", fmt::format("expected at most max_positions ({}), found {}", s.maxPositions, s.sequence));
    if (s.maxPredictions > s.sequence)
        cfg.fail("/workload/max_predictions", fmt::format("expected at most the sequence length ({}), found {}", s.sequence, s.maxPredictions));
    if (w.contains("packing")) {
        const json& p = w.at("packing");
        s.packing = BertPacking{p.at("average_sequences_per_row").get<double>(), p.at("max_sequences_per_row").get<uint64_t>()};
        if (s.packing->averagePerRow > double(s.packing->maxPerRow))
            cfg.fail("/workload/packing/average_sequences_per_row",
                     fmt::format("expected at most max_sequences_per_row ({}), found {}", s.packing->maxPerRow, s.packing->averagePerRow));
        if (s.packing->maxPerRow > s.sequence)
            cfg.fail("/workload/packing/max_sequences_per_row",
                     fmt::format("expected at most the sequence length ({}), found {}", s.sequence, s.packing->maxPerRow));
    }
    if (s.paddedVocab() % s.embeddingSerialization != 0)
        cfg.fail("/workload/embedding_serialization",
                 fmt::format("expected a divisor of the padded vocabulary ({} rows), found {}", s.paddedVocab(), s.embeddingSerialization));
    return s;
}

/** The optimizer of a BERT or graph workload. */
OptimizerSpec optimizerOf(const LoadedConfig& cfg)
{
    static const std::map<std::string, Optimizer> kinds = {
        {"adamw", Optimizer::AdamW}, {"lamb", Optimizer::Lamb}, {"sgd", Optimizer::Sgd}, {"lars", Optimizer::Lars}};
    const json& w = cfg.doc.at("workload");
    OptimizerSpec o;
    o.kind = kinds.at(w.at("optimizer"));
    o.momentum = w.value("momentum", 0.0);
    if (w.contains("momentum") && o.kind != Optimizer::Sgd && o.kind != Optimizer::Lars)
        cfg.fail("/workload/momentum", "expected only with \"optimizer\": \"sgd\" or \"lars\"");
    else if (!w.contains("momentum") && (o.kind == Optimizer::Sgd || o.kind == Optimizer::Lars))
        o.momentum = 0.9;
    o.masterWeights = w.at("master_weights");
    o.lossScaling = w.at("loss_scaling");
    return o;
}

WorkloadSpec decodeBert(const LoadedConfig& cfg, const SystemParams& system, const RunSpec& run)
{
    const json& w = cfg.doc.at("workload");
    BertSpec spec;
    spec.options = optionsOf(cfg, system, run);
    spec.shape = bertShapeOf(cfg);
    spec.task = w.at("task") == "squad" ? BertTask::Squad : BertTask::Pretraining;
    if (spec.task == BertTask::Squad && spec.options.train)
        cfg.fail("/workload/task", "expected \"pretraining\" for training: the SQuAD head is modelled for inference");
    if (spec.task == BertTask::Squad && spec.shape.packing)
        cfg.fail("/workload/packing", "expected only with \"task\": \"pretraining\" (packed MLM and NSP heads): the SQuAD head is not packed");
    spec.optimizer = optimizerOf(cfg);
    const json& strategy = w.at("strategy");
    if (strategy.contains("layers_per_ipu"))
        spec.layersPerIpu = strategy.at("layers_per_ipu").get<std::vector<uint64_t>>();
    if (strategy.contains("heads_ipu")) {
        if (spec.layersPerIpu.empty())
            cfg.fail("/workload/strategy/heads_ipu", "expected only with layers_per_ipu");
        spec.headsIpu = strategy.at("heads_ipu").get<uint32_t>();
    }
    spec.availableMemoryProportion = memoryProportionOf(w);
    return spec;
}

LayerKind layerKindOf(const std::string& op)
{
    static const std::map<std::string, LayerKind> kinds = [] {
        std::map<std::string, LayerKind> k = {
            {"conv2d", LayerKind::Conv2d},   {"linear", LayerKind::Linear},         {"matmul", LayerKind::MatMul},
            {"add", LayerKind::Add},         {"softmax", LayerKind::Softmax},       {"layer_norm", LayerKind::LayerNorm},
            {"max_pool2d", LayerKind::MaxPool2d}, {"flatten", LayerKind::Flatten},  {"reshape", LayerKind::Reshape},
            {"embedding", LayerKind::Embedding},  {"cross_entropy", LayerKind::CrossEntropy},
            {"avg_pool2d", LayerKind::AvgPool2d}, {"global_avg_pool", LayerKind::GlobalAvgPool},
            {"batch_norm", LayerKind::BatchNorm2d}, {"dropout", LayerKind::Dropout}, {"sub", LayerKind::Sub},
            {"mul", LayerKind::Mul}, {"div", LayerKind::Div}, {"scale", LayerKind::Scale}, {"transpose", LayerKind::Transpose},
            {"log_softmax", LayerKind::LogSoftmax}, {"nll_loss", LayerKind::NllLoss}, {"concat", LayerKind::Concat},
            {"slice", LayerKind::Slice}, {"group_norm", LayerKind::GroupNorm}, {"gather", LayerKind::Gather},
            {"parameter", LayerKind::Parameter}, {"attention_mask", LayerKind::AttentionMask},
            {"lstm", LayerKind::Lstm}, {"gru", LayerKind::Gru}, {"reduce", LayerKind::Reduce}, {"pad", LayerKind::Pad}, {"masked_fill", LayerKind::MaskedFill},
            {"eq", LayerKind::Compare}, {"lt", LayerKind::Compare}, {"gt", LayerKind::Compare},
            {"logical_not", LayerKind::LogicalNot}, {"where", LayerKind::Where}, {"expand", LayerKind::Expand}};
        for (const ActivationRow& a : activationTable())
            k.emplace(a.graphName, a.layer);
        return k;
    }();
    return kinds.at(op);
}

/** A height-and-width attribute: one number for both, or [height, width]. */
std::array<uint32_t, 2> pairOf(const json& op, const char* key, std::array<uint32_t, 2> fallback)
{
    if (!op.contains(key))
        return fallback;
    const json& v = op.at(key);
    return v.is_number() ? std::array<uint32_t, 2>{v.get<uint32_t>(), v.get<uint32_t>()}
                         : std::array<uint32_t, 2>{v.at(0).get<uint32_t>(), v.at(1).get<uint32_t>()};
}

LayerSpec layerOf(const json& op)
{
    LayerSpec l;
    l.name = op.at("name");
    l.kind = layerKindOf(op.at("op"));
    l.comparison = op.at("op") == "lt" ? Comparison::Less : op.at("op") == "gt" ? Comparison::Greater : Comparison::Equal;
    l.inputs = op.value("inputs", std::vector<std::string>());
    l.block = op.value("block", std::string());
    if (op.contains("ipu"))
        l.ipu = op.at("ipu").get<uint32_t>();
    l.features = op.value("out_channels", op.value("out_features", op.value("embedding_dim", op.value("hidden_size", uint64_t(0)))));
    l.rows = op.value("num_embeddings", uint64_t(0));
    l.kernel = pairOf(op, "kernel_size", {1, 1});
    const bool pool = l.kind == LayerKind::MaxPool2d || l.kind == LayerKind::AvgPool2d;
    l.stride = pairOf(op, "stride", pool ? l.kernel : std::array<uint32_t, 2>{1, 1}); // torch: a pool's stride is its kernel
    l.padding = pairOf(op, "padding", {0, 0});
    l.ceilMode = op.value("ceil_mode", false);
    l.dilation = pairOf(op, "dilation", {1, 1});
    l.groups = op.value("groups", op.value("num_groups", 1u));
    l.bias = op.value("bias", true);
    l.affine = op.value("affine", true);
    l.shape = op.value("shape", std::vector<int64_t>());
    l.learned = op.value("learned", true);
    l.perm = op.value("dims", std::vector<uint32_t>());
    l.mean = op.value("reduction", std::string("mean")) == "mean";
    l.keepDim = op.value("keepdim", false);
    if (op.contains("pads"))
        for (const json& pair : op.at("pads"))
            for (const json& v : pair)
                l.pads.push_back(v.get<uint64_t>());
    const std::string padMode = op.value("mode", std::string("constant"));
    l.padMode = padMode == "reflect" ? PadMode::Reflect : padMode == "replicate" ? PadMode::Edge : PadMode::Constant;
    l.axis = op.value("dim", 1u);
    l.start = op.value("start", uint64_t(0));
    l.end = op.value("end", uint64_t(0));
    l.step = op.value("step", uint64_t(1));
    if (op.contains("index") && op.at("index").is_array())
        l.indexList = op.at("index").get<std::vector<uint64_t>>();
    else
        l.index = op.value("index", uint64_t(0));
    l.tiedWeight = op.value("weight", std::string());
    l.attention = op.value("attention", false);
    return l;
}

/** The graph ops a config may name: the schema's graph_ops, in its order. */
std::vector<std::string> graphOpNames()
{
    std::vector<std::string> names;
    for (const auto& [name, form] : config::Schema::instance().root().at("definitions").at("graph_ops").items())
        names.push_back(name);
    return names;
}

/** The model: each op checked against its own form (so an error names the op's kind, not every
 *  alternative), then shapes when it is built. */
ModelSpec modelOf(const LoadedConfig& cfg)
{
    const json& g = cfg.doc.at("workload").at("graph");
    ModelSpec m;
    for (const json& in : g.at("inputs"))
        m.inputs.push_back({in.at("name"), in.at("shape").get<std::vector<uint64_t>>(), in.value("dtype", std::string("float")) == "int32",
                            in.value("dtype", std::string("float")) == "uint8", in.value("stream", std::string()), std::nullopt});
    const json& ops = g.at("ops");
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const std::string ptr = fmt::format("/workload/graph/ops/{}", i);
        const std::string op = ops[i].at("op").get<std::string>();
        if (!config::Schema::instance().root().at("definitions").at("graph_ops").contains(op))
            cfg.fail(ptr + "/op", fmt::format("expected one of {} (not \"{}\")", fmt::join(graphOpNames(), ", "), op));
        config::Schema::instance().validate(ops[i], "/definitions/graph_ops/" + op, ptr,
                                            [&](const std::string& p) { return cfg.fileOf(p); });
        m.layers.push_back(layerOf(ops[i]));
    }
    m.outputs = g.at("outputs").get<std::vector<std::string>>();
    return m;
}

WorkloadSpec decodeGraph(const LoadedConfig& cfg, const SystemParams& system, const RunSpec& run)
{
    const json& w = cfg.doc.at("workload");
    rejectLayerCounts(cfg, "a graph's");
    GraphSpec spec;
    spec.options = optionsOf(cfg, system, run);
    spec.model = modelOf(cfg);
    spec.optimizer = optimizerOf(cfg);
    spec.availableMemoryProportion = memoryProportionOf(w);
    return spec;
}


WorkloadSpec decodeOnnx(const LoadedConfig& cfg, const SystemParams& system, const RunSpec& run)
{
    const json& w = cfg.doc.at("workload");
    rejectLayerCounts(cfg, "an ONNX model's");
    OnnxSource source;
    source.path = config::workloadModelFile(cfg);
    for (const auto& [name, shape] : w.at("inputs").items())
        source.inputs[name] = shape.get<std::vector<uint64_t>>();
    source.buffers = w.at("buffers").get<std::vector<std::string>>();
    for (const json& b : w.at("blocks")) {
        OnnxBlock block{b.at("name"), b.at("prefix"), std::nullopt};
        if (b.contains("ipu"))
            block.ipu = b.at("ipu").get<uint32_t>();
        source.blocks.push_back(block);
    }
    source.crossEntropy = w.at("loss") == "cross_entropy";
    source.eightBitInputs = w.at("eight_bit_io");
    if (source.eightBitInputs && w.at("input_dtype") != "model" && w.at("input_dtype") != "uint8")
        cfg.fail("/workload/input_dtype", fmt::format("expected \"model\" or \"uint8\" with eight_bit_io, found \"{}\"",
                                                      w.at("input_dtype").get<std::string>()));
    GraphSpec spec;
    spec.options = optionsOf(cfg, system, run);
    spec.model = importOnnx(source, cfg);
    spec.optimizer = optimizerOf(cfg);
    spec.availableMemoryProportion = memoryProportionOf(w);
    return spec;
}

/** The workload kinds: the name in `/workload/kind` and how its spec is decoded. */
struct WorkloadKind
{
    std::string_view name;
    WorkloadSpec (*decode)(const LoadedConfig&, const SystemParams&, const RunSpec&);
};
constexpr WorkloadKind kWorkloadKinds[] = {
    {"schedule", decodeSchedule},
    {"mnist", decodeMnist},
    {"bert", decodeBert},
    {"graph", decodeGraph},
    {"onnx", decodeOnnx},
};

} // namespace

WorkloadSpec decodeWorkload(const LoadedConfig& cfg, const SystemParams& system, const RunSpec& run)
{
    const std::string kind = cfg.doc.at("workload").at("kind");
    for (const auto& k : kWorkloadKinds)
        if (k.name == kind)
            return k.decode(cfg, system, run);
    cfg.fail("/workload/kind", fmt::format("unknown workload kind \"{}\"", kind));
}

ExperimentSpec decodeExperiment(const LoadedConfig& cfg)
{
    ExperimentSpec e;
    e.name = cfg.name;
    e.system = decodeSystem(cfg);
    e.run = decodeRun(cfg, e.system);
    e.workload = decodeWorkload(cfg, e.system, e.run);
    return e;
}

} // namespace ipusim
