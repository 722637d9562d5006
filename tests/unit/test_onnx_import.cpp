// SPDX-License-Identifier: MIT
// ONNX import: models built here with the ONNX library, mapped layer by layer, and every
// import error with its message (unsupported op, dynamic shapes, missing input shapes, unknown
// block prefixes, unreadable files).
#include "Simulate.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/OnnxModel.hpp"
#include "models/json/ScheduleJson.hpp"
#include "sim/engine/Experiment.hpp"
#include "workloads/graph/ModelBuilder.hpp"

#include <catch2/catch.hpp>
#include <limits>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <fstream>

using namespace ipusim;
using json = nlohmann::json;

namespace {

using test::kRoot;

/** A graph input or output of `type` with `dims` (0: a dynamic dimension named "n"). */
void declare(onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims,
             int32_t type = onnx::TensorProto_DataType_FLOAT)
{
    v->set_name(name);
    v->clear_type();
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (int64_t d : dims) {
        auto* dim = t->mutable_shape()->add_dim();
        if (d > 0)
            dim->set_dim_value(d);
        else
            dim->set_dim_param("n");
    }
}

onnx::NodeProto* node(onnx::GraphProto* g, const std::string& name, const std::string& op, std::vector<std::string> in,
                      std::vector<std::string> out)
{
    auto* n = g->add_node();
    n->set_name(name);
    n->set_op_type(op);
    for (const auto& i : in)
        n->add_input(i);
    for (const auto& o : out)
        n->add_output(o);
    return n;
}

/** A Constant node writing float `values` (one value: a scalar) to `out`. */
void constant(onnx::GraphProto* g, const std::string& out, std::vector<float> values)
{
    auto* a = node(g, "/" + out, "Constant", {}, {out})->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
    if (values.size() > 1)
        a->mutable_t()->add_dims(int64_t(values.size()));
    for (float v : values)
        a->mutable_t()->add_float_data(v);
}

void intsAttr(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v)
{
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t x : v)
        a->add_ints(x);
}

void intAttr(onnx::NodeProto* n, const std::string& name, int64_t v)
{
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
}

/** A 784 -> 1024 -> 10 MLP as torch.onnx.export writes it without weights: Gemm with a bias,
 *  then a transposed weight and a MatMul (a bias-free nn.Linear). */
onnx::ModelProto mlpModel(int64_t opset = 17)
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    auto* g = m.mutable_graph();
    g->set_name("mlp");
    declare(g->add_input(), "input", {1, 784});
    declare(g->add_input(), "fc1.weight", {1024, 784});
    declare(g->add_input(), "fc1.bias", {1024});
    declare(g->add_input(), "fc2.weight", {10, 1024});
    intAttr(node(g, "/fc1/Gemm", "Gemm", {"input", "fc1.weight", "fc1.bias"}, {"h"}), "transB", 1);
    node(g, "/relu1/Relu", "Relu", {"h"}, {"r"});
    intsAttr(node(g, "/fc2/Transpose", "Transpose", {"fc2.weight"}, {"w2t"}), "perm", {1, 0});
    node(g, "/fc2/MatMul", "MatMul", {"r", "w2t"}, {"output"});
    declare(g->add_output(), "output", {1, 10});
    return m;
}

/** A 3 -> 4 channel 3x3 convolution on 8 x 8 images. */
onnx::ModelProto convModel()
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    declare(g->add_input(), "input", {1, 3, 8, 8});
    declare(g->add_input(), "conv.weight", {4, 3, 3, 3});
    auto* c = node(g, "/conv/Conv", "Conv", {"input", "conv.weight"}, {"output"});
    intsAttr(c, "kernel_shape", {3, 3});
    intsAttr(c, "pads", {1, 1, 1, 1});
    declare(g->add_output(), "output", {1, 4, 8, 8});
    return m;
}

struct TempFile
{
    std::string path;
    explicit TempFile(const onnx::ModelProto& m, const std::string& name)
        : path(std::string(IPUSIM_BINARY_DIR) + "/test_" + name + ".onnx")
    {
        std::ofstream out(path, std::ios::binary);
        m.SerializeToOstream(&out);
    }
    ~TempFile() { std::remove(path.c_str()); }
};

json onnxConfig(const std::string& file, const json& workload = json::object())
{
    json w = {{"kind", "onnx"}, {"file", file}, {"mode", "infer"}, {"micro_batch", 4}};
    w.update(workload);
    return {{"system", {{"base", "hardware/mk2.json"}}}, {"workload", w}};
}

Experiment build(const json& doc) { return buildExperiment(config::loadConfig(doc, kRoot + "/configs/o.json")); }

std::string errorOf(const json& doc) { return test::configErrorOf(doc, kRoot + "/configs/o.json"); }

using Throwing = test::ThrowingDiagnostics;

} // namespace

TEST_CASE("ONNX import: an MLP maps node by node onto graph layers", "[onnx]")
{
    const TempFile f(mlpModel(), "mlp");
    const ModelSpec m = config::importOnnx({f.path, {}, {}, false}, Throwing());
    // The weights are inputs of the file, but only data is a model input.
    REQUIRE(m.inputs.size() == 1);
    CHECK(m.inputs[0].name == "input");
    CHECK(m.inputs[0].shape == std::vector<uint64_t>{784});
    REQUIRE(m.layers.size() == 3); // the weight's transpose is no layer
    CHECK(m.layers[0].kind == LayerKind::Linear);
    CHECK(m.layers[0].features == 1024);
    CHECK(m.layers[0].bias);
    CHECK(m.layers[1].kind == LayerKind::Relu);
    CHECK(m.layers[2].kind == LayerKind::Linear);
    CHECK(m.layers[2].features == 10);
    CHECK_FALSE(m.layers[2].bias);
    CHECK(m.layers[2].origin == "ONNX node \"/fc2/MatMul\" (MatMul)");
    CHECK(m.outputs == std::vector<std::string>{"/fc2/MatMul"});

    // The same MLP as a JSON graph compiles to the same schedule, apart from names.
    const Experiment onnxRun = build(onnxConfig(f.path));
    json graph = {{"inputs", json::array({{{"name", "input"}, {"shape", {784}}}})},
                  {"ops", json::array({{{"name", "/fc1/Gemm"}, {"op", "linear"}, {"inputs", {"input"}}, {"out_features", 1024}},
                                       {{"name", "/relu1/Relu"}, {"op", "relu"}, {"inputs", {"/fc1/Gemm"}}},
                                       {{"name", "/fc2/MatMul"}, {"op", "linear"}, {"inputs", {"/relu1/Relu"}}, {"out_features", 10}, {"bias", false}}})},
                  {"outputs", {"/fc2/MatMul"}}};
    json doc = onnxConfig("", {{"graph", graph}});
    doc["workload"]["kind"] = "graph";
    doc["workload"].erase("file");
    const Experiment graphRun = build(doc);
    CHECK(scheduleToJson(onnxRun.schedule) == scheduleToJson(graphRun.schedule));
}

TEST_CASE("ONNX import: Gather of data by constant indices is x[:, i] or x[:, [i, j]]", "[onnx]")
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    declare(g->add_input(), "input", {1, 8, 16});
    node(g, "/Relu", "Relu", {"input"}, {"r"});
    auto* c = node(g, "/Constant", "Constant", {}, {"last"});
    auto* value = c->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto_AttributeType_TENSOR);
    value->mutable_t()->set_data_type(onnx::TensorProto_DataType_INT64);
    value->mutable_t()->add_int64_data(-1); // x[:, -1]
    intAttr(node(g, "/Gather", "Gather", {"r", "last"}, {"output"}), "axis", 1);
    declare(g->add_output(), "output", {1, 16});
    const TempFile f(m, "gather");
    const ModelSpec spec = config::importOnnx({f.path, {}, {}, false}, Throwing());
    REQUIRE(spec.layers.size() == 2);
    CHECK(spec.layers[1].kind == LayerKind::Gather);
    CHECK(spec.layers[1].inputs == std::vector<std::string>{"/Relu"});
    CHECK(spec.layers[1].index == 7);
    CHECK(spec.layers[1].indexList.empty());
    CHECK(errorOf(onnxConfig(f.path)) == "no error");

    // x[:, [2, -1]]: a list keeps dimension 1.
    value->mutable_t()->add_dims(2);
    value->mutable_t()->set_int64_data(0, 2);
    value->mutable_t()->add_int64_data(-1);
    declare(g->mutable_output(0), "output", {1, 2, 16});
    const TempFile list(m, "gather_list");
    const ModelSpec listed = config::importOnnx({list.path, {}, {}, false}, Throwing());
    CHECK(listed.layers.at(1).indexList == std::vector<uint64_t>{2, 7});
    CHECK(errorOf(onnxConfig(list.path)) == "no error");

    declare(g->add_input(), "pos", {2}, onnx::TensorProto_DataType_INT64);
    g->mutable_node(2)->set_input(1, "pos");
    declare(g->mutable_output(0), "output", {1, 2, 16});
    const TempFile indices(m, "gather_indices");
    CHECK_THAT(errorOf(onnxConfig(indices.path)),
               Catch::Contains("ONNX node \"/Gather\" (Gather): expected a constant index or list of them (x[:, i], x[:, [i, j]]): "
                               "gathering data by indices computed in the graph is not modelled yet"));
}

TEST_CASE("ONNX import: qkv[i] after a permute that moved the batch is a slice, x[:, ::2] a strided slice, Expand of data an expand", "[onnx]")
{
    // Swin's q, k, v = qkv[0], qkv[1], qkv[2] of qkv.permute(2, 0, 1, 3): [3, batch, 6, 4].
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    declare(g->add_input(), "input", {2, 6, 12});
    auto ints = [&](const std::string& out, std::vector<int64_t> values, bool scalar = false) {
        auto* a = node(g, "/" + out, "Constant", {}, {out})->add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
        a->mutable_t()->set_data_type(onnx::TensorProto_DataType_INT64);
        if (!scalar)
            a->mutable_t()->add_dims(int64_t(values.size()));
        for (int64_t v : values)
            a->mutable_t()->add_int64_data(v);
    };
    node(g, "/Relu", "Relu", {"input"}, {"r"});
    ints("shape", {2, 6, 3, 4});
    node(g, "/Reshape", "Reshape", {"r", "shape"}, {"qkv"});
    intsAttr(node(g, "/Transpose", "Transpose", {"qkv"}, {"heads"}), "perm", {2, 0, 1, 3});
    ints("one", {1}, true);
    intAttr(node(g, "/Gather", "Gather", {"heads", "one"}, {"k"}), "axis", 0);
    ints("starts", {0});
    ints("ends", {std::numeric_limits<int64_t>::max()});
    ints("axes", {1});
    ints("steps", {2});
    node(g, "/Slice", "Slice", {"k", "starts", "ends", "axes", "steps"}, {"output"});
    declare(g->add_output(), "output", {2, 3, 4});
    // An attention mask [batch, 1, 1, 8] of data over 4 heads and 8 queries: an expand of
    // dimensions 1 and 2 after the batch, the last kept.
    declare(g->add_input(), "pad", {2, 1, 1, 8});
    node(g, "/Sigmoid", "Sigmoid", {"pad"}, {"soft"});
    ints("target", {2, 4, 8, 8});
    node(g, "/Expand", "Expand", {"soft", "target"}, {"mask"});
    declare(g->add_output(), "mask", {2, 4, 8, 8});
    const TempFile f(m, "qkv");
    const ModelSpec spec = config::importOnnx({f.path, {}, {}, false}, Throwing());
    REQUIRE(spec.layers.size() == 8);
    CHECK(spec.layers[7].kind == LayerKind::Expand);
    CHECK(spec.layers[7].shape == std::vector<int64_t>{4, 8, 8});
    // The layer's axis counts the batch first: dimension 0 of [3, batch, 6, 4] is axis 1.
    const LayerSpec& part = spec.layers[3];
    CHECK(part.kind == LayerKind::Slice);
    CHECK(part.axis == 1);
    CHECK((part.start == 1 && part.end == 2 && part.step == 1));
    CHECK(spec.layers[4].kind == LayerKind::Reshape);
    CHECK(spec.layers[4].shape == std::vector<int64_t>{6, 4});
    const LayerSpec& strided = spec.layers[5];
    CHECK(strided.kind == LayerKind::Slice);
    CHECK((strided.axis == 1 && strided.start == 0 && strided.step == 2));
    CHECK(errorOf(onnxConfig(f.path)) == "no error");
}

TEST_CASE("ONNX import: norms with a constant scale and bias have no learned parameters", "[onnx]")
{
    // InstanceNorm2d(affine=False) as torch writes it: constant ones and zeros.
    onnx::ModelProto m = convModel();
    auto* g = m.mutable_graph();
    g->mutable_node(0)->set_output(0, "c");
    constant(g, "scale", {1, 1, 1, 1});
    constant(g, "shift", {0, 0, 0, 0});
    node(g, "/inorm/InstanceNormalization", "InstanceNormalization", {"c", "scale", "shift"}, {"n"});
    constant(g, "ones", std::vector<float>(8, 1.0f));
    constant(g, "zeros", std::vector<float>(8, 0.0f));
    intAttr(node(g, "/ln/LayerNormalization", "LayerNormalization", {"n", "ones", "zeros"}, {"output"}), "axis", -1);
    const TempFile f(m, "plain_norms");
    const ModelSpec spec = config::importOnnx({f.path, {}, {}, false}, Throwing());
    REQUIRE(spec.layers.size() == 3);
    CHECK(spec.layers[1].kind == LayerKind::GroupNorm);
    CHECK(spec.layers[1].groups == 4);
    CHECK_FALSE(spec.layers[1].affine);
    CHECK(spec.layers[2].kind == LayerKind::LayerNorm);
    CHECK_FALSE(spec.layers[2].affine);
    CHECK(errorOf(onnxConfig(f.path)) == "no error");
}

TEST_CASE("ONNX import: every import error names the node or the config pointer", "[onnx][errors]")
{
    {
        onnx::ModelProto m = mlpModel();
        m.mutable_graph()->mutable_node(1)->set_op_type("Softplus");
        const TempFile f(m, "softplus");
        CHECK_THAT(errorOf(onnxConfig(f.path)),
                   Catch::Contains("/workload/file: ONNX node \"/relu1/Relu\" (Softplus): unsupported op; supported: Add, AveragePool"));
    }
    {
        // Every node that stands in the way in one error, in graph order: an unsupported op, one
        // after it that reads its output, and a supported op that cannot be imported (an
        // unsqueeze of data) on a branch of its own; not the supported op after them.
        onnx::ModelProto m = mlpModel();
        auto* g = m.mutable_graph();
        auto* axes = g->add_initializer();
        axes->set_name("axes");
        axes->set_data_type(onnx::TensorProto_DataType_INT64);
        axes->add_dims(1);
        axes->add_int64_data(1);
        g->mutable_node(1)->set_op_type("Pow"); // of an exponent the graph computes
        g->mutable_node(1)->add_input("h");
        g->mutable_node(3)->set_output(0, "mm");
        node(g, "/act/Celu", "Celu", {"mm"}, {"c"});
        node(g, "/view/Unsqueeze", "Unsqueeze", {"h", "axes"}, {"v"});
        node(g, "/Shape", "Shape", {"v"}, {"vs"}); // of a blocked value, but known from shape inference
        node(g, "/Add", "Add", {"c", "c"}, {"output"});
        const TempFile f(m, "blockers");
        const std::string error = errorOf(onnxConfig(f.path));
        CHECK_THAT(error, Catch::Contains("/workload/file: 3 nodes stand in the way (Celu 1, Pow 1, Unsqueeze 1), in graph order:\n"
                                          "  ONNX node \"/relu1/Relu\" (Pow): unsupported op of an exponent computed in the graph "
                                          "(\"h\"; a constant scalar is supported)\n"
                                          "  ONNX node \"/act/Celu\" (Celu): unsupported op\n"
                                          "  ONNX node \"/view/Unsqueeze\" (Unsqueeze): unsupported op of data (Unsqueeze of a weight is "
                                          "supported)\nsupported: Add, AveragePool"));
        CHECK_THAT(error, !Catch::Contains("/Add\"") && !Catch::Contains("(Shape)"));
    }
    {
        // A cast of data to another type (a mask to floating point) is named; one to its own
        // type is the operand.
        onnx::ModelProto m = mlpModel();
        auto* g = m.mutable_graph();
        auto* relu = g->mutable_node(1);
        relu->set_op_type("Cast"); // h to fp16, then back to fp32 for the next layer
        relu->set_output(0, "h16");
        intAttr(relu, "to", onnx::TensorProto_DataType_FLOAT16);
        intAttr(node(g, "/back", "Cast", {"h16"}, {"r"}), "to", onnx::TensorProto_DataType_FLOAT);
        for (int k = g->node_size() - 1; k > 2; --k)
            g->mutable_node()->SwapElements(k, k - 1);
        const TempFile f(m, "cast");
        CHECK_THAT(errorOf(onnxConfig(f.path)), Catch::Contains("ONNX node \"/relu1/Relu\" (Cast): unsupported op of data from "
                                                                "FLOAT to FLOAT16: only a cast to the value's own type (a no-op) is modelled"));
        g->mutable_node(1)->mutable_attribute(0)->set_i(onnx::TensorProto_DataType_FLOAT);
        g->mutable_node(2)->mutable_attribute(0)->set_i(onnx::TensorProto_DataType_FLOAT);
        const TempFile same(m, "cast_same");
        CHECK(errorOf(onnxConfig(same.path)) == "no error");
    }
    {
        onnx::ModelProto m = mlpModel();
        declare(m.mutable_graph()->mutable_input(0), "input", {1, 0});
        const TempFile f(m, "dynamic");
        CHECK_THAT(errorOf(onnxConfig(f.path)),
                   Catch::Contains("/workload/inputs: expected the per-sample shape of input \"input\": the file leaves dimension 1 "
                                   "of [1, n] dynamic"));
        // Given in the config, it runs.
        CHECK(errorOf(onnxConfig(f.path, {{"inputs", {{"input", {784}}}}})) == "no error");
        CHECK_THAT(errorOf(onnxConfig(f.path, {{"inputs", {{"input", {28, 28}}}}})),
                   Catch::Contains("/workload/inputs/input: expected 1 dimension (the file's input is [1, n], the batch first), found 2"));
        CHECK_THAT(errorOf(onnxConfig(f.path, {{"inputs", {{"images", {784}}}}})),
                   Catch::Contains("/workload/inputs/images: expected the name of a graph input of"));
    }
    {
        // A reshape to a shape the graph computes from a dynamic batch (x.view(x.size(0), -1)
        // exported with dynamic axes); a static one would be folded to a constant.
        onnx::ModelProto m = mlpModel();
        auto* g = m.mutable_graph();
        declare(g->mutable_input(0), "input", {0, 784});
        declare(g->mutable_output(0), "output", {0, 10});
        g->mutable_node(3)->set_output(0, "mm");
        node(g, "/Shape", "Shape", {"mm"}, {"shape"});
        node(g, "/Reshape", "Reshape", {"mm", "shape"}, {"output"});
        const TempFile f(m, "reshape");
        CHECK_THAT(errorOf(onnxConfig(f.path)), Catch::Contains("ONNX node \"/Shape\" (Shape): unsupported op"));
        g->mutable_node(4)->set_op_type("Identity");
        const TempFile f2(m, "reshape2");
        CHECK_THAT(errorOf(onnxConfig(f2.path)),
                   Catch::Contains("ONNX node \"/Reshape\" (Reshape): expected a constant target shape (a shape computed in the graph is not supported)"));
    }
    {
        const TempFile f(mlpModel(), "blocks");
        const json blocks = json::array({{{"name", "a"}, {"prefix", "/fc1/"}}, {{"name", "b"}, {"prefix", "/fc3/"}}});
        CHECK_THAT(errorOf(onnxConfig(f.path, {{"blocks", blocks}})),
                   Catch::Contains("/workload/blocks/1/prefix: no node name of \"" + f.path + "\" starts with \"/fc3/\""));
        const json later = json::array({{{"name", "a"}, {"prefix", "/relu1/"}, {"ipu", 0}}});
        CHECK_THAT(errorOf(onnxConfig(f.path, {{"blocks", later}})),
                   Catch::Contains("ONNX node \"/fc1/Gemm\" (Gemm): expected an \"ipu\" for block \"model\" (the ops before the first "
                                   "named block): other blocks name theirs"));
        CHECK_THAT(errorOf(onnxConfig(f.path, {{"mode", "train"}})),
                   Catch::Contains("/workload/loss: expected \"cross_entropy\" (or a SoftmaxCrossEntropyLoss or NegativeLogLikelihoodLoss node in the model) to train from"));
    }
    {
        const TempFile f(mlpModel(11), "opset");
        CHECK_THAT(errorOf(onnxConfig(f.path)),
                   Catch::Contains("/workload/file: expected opset 13 to 17 (torch.onnx.export(..., opset_version=13)), found 11"));
    }
    {
        onnx::ModelProto m = mlpModel();
        intsAttr(m.mutable_graph()->mutable_node(0), "pads", {1, 0, 0, 0});
        m.mutable_graph()->mutable_node(0)->set_op_type("Conv");
        const TempFile f(m, "conv");
        CHECK_THAT(errorOf(onnxConfig(f.path)),
                   Catch::Contains("ONNX node \"/fc1/Gemm\" (Conv): expected a 2-D convolution (weight [out, in, kh, kw]), found a weight of 2 dimensions"));
    }
    {
        const TempFile ok(convModel(), "conv_ok");
        CHECK(errorOf(onnxConfig(ok.path)) == "no error");
        onnx::ModelProto m = convModel();
        intsAttr(m.mutable_graph()->mutable_node(0), "strides", {0, 0});
        const TempFile f(m, "conv_stride");
        CHECK_THAT(errorOf(onnxConfig(f.path)), Catch::Contains("ONNX node \"/conv/Conv\" (Conv): expected strides of 1 to 65535, found [0, 0]"));
        m = convModel();
        intAttr(m.mutable_graph()->mutable_node(0), "group", 2);
        const TempFile g(m, "conv_group");
        CHECK_THAT(errorOf(onnxConfig(g.path)),
                   Catch::Contains("(Conv): expected an input of 3 x 2 = 6 channels for weight \"conv.weight\" [4, 3, 3, 3], found 3"));
        m = convModel();
        m.mutable_graph()->mutable_node(0)->mutable_attribute(1)->set_ints(0, -1);
        const TempFile p(m, "conv_pads");
        // ONNX's shape inference finds the output no longer fits the file's.
        CHECK_THAT(errorOf(onnxConfig(p.path)), Catch::Contains("/workload/file: ONNX shape inference failed on"));
        m = convModel();
        m.mutable_graph()->mutable_node(0)->mutable_input()->RemoveLast();
        const TempFile one(m, "conv_inputs");
        CHECK_THAT(errorOf(onnxConfig(one.path)), Catch::Contains("ONNX node \"/conv/Conv\" (Conv): expected 2 inputs, found 1"));
    }
    {
        onnx::ModelProto m = mlpModel();
        declare(m.mutable_graph()->mutable_input(1), "fc1.weight", {1024, 700});
        const TempFile f(m, "gemm_k");
        CHECK_THAT(errorOf(onnxConfig(f.path)),
                   Catch::Contains("ONNX node \"/fc1/Gemm\" (Gemm): expected an input whose last dimension is 700 for weight \"fc1.weight\" [1024, 700], found 784"));
    }
    {
        // A learned scale with a constant bias: neither InstanceNorm2d's affine nor its absence.
        onnx::ModelProto m = convModel();
        auto* g = m.mutable_graph();
        g->mutable_node(0)->set_output(0, "c");
        declare(g->add_input(), "inorm.weight", {4});
        constant(g, "shift", {0, 0, 0, 0});
        node(g, "/inorm/InstanceNormalization", "InstanceNormalization", {"c", "inorm.weight", "shift"}, {"output"});
        const TempFile f(m, "inorm");
        CHECK_THAT(errorOf(onnxConfig(f.path)),
                   Catch::Contains("ONNX node \"/inorm/InstanceNormalization\" (InstanceNormalization): expected a learned scale and bias, or neither"));
    }
    {
        // Unsqueeze of data (of a weight it is GroupNorm's per-channel [C, 1, 1]).
        onnx::ModelProto m = mlpModel();
        auto* axes = m.mutable_graph()->add_initializer();
        axes->set_name("axes");
        axes->set_data_type(onnx::TensorProto_DataType_INT64);
        axes->add_dims(1);
        axes->add_int64_data(1);
        m.mutable_graph()->mutable_node(1)->set_op_type("Unsqueeze");
        m.mutable_graph()->mutable_node(1)->add_input("axes");
        declare(m.mutable_graph()->mutable_output(0), "output", {1, 1, 10});
        const TempFile f(m, "unsqueeze");
        CHECK_THAT(errorOf(onnxConfig(f.path)),
                   Catch::Contains("ONNX node \"/relu1/Relu\" (Unsqueeze): unsupported op of data (Unsqueeze of a weight is supported)"));
    }
    CHECK_THAT(errorOf(onnxConfig("nope.onnx")), Catch::Contains("/workload/file: cannot read ONNX model \"" + kRoot + "/configs/nope.onnx\""));
    CHECK_THAT(errorOf(onnxConfig(kRoot + "/configs/default.json")), Catch::Contains("is not an ONNX model"));
}

namespace {

/** An int64 initializer (pads, axes). */
void ints(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> values)
{
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_INT64);
    t->add_dims(int64_t(values.size()));
    for (int64_t v : values)
        t->add_int64_data(v);
}

/** convModel's convolution without padding of its own, after a Pad of `pads` (ONNX's order:
 *  every dimension's start, then every end). */
onnx::ModelProto paddedConvModel(std::vector<int64_t> pads, int64_t side = 8)
{
    onnx::ModelProto m = convModel();
    auto* g = m.mutable_graph();
    const onnx::NodeProto conv = g->node(0);
    g->clear_node();
    ints(g, "pads", std::move(pads));
    node(g, "/pad/Pad", "Pad", {"input", "pads"}, {"padded"});
    auto* unpadded = g->add_node();
    *unpadded = conv;
    unpadded->set_input(0, "padded");
    unpadded->mutable_attribute()->RemoveLast(); // its pads
    declare(g->mutable_output(0), "output", {1, 4, side, side});
    return m;
}

} // namespace

TEST_CASE("ONNX import: a zero pad of height and width is its reader's padding, ceil-mode pooling, a one-input concat", "[onnx]")
{
    {
        // F.pad(x, (1, 1, 1, 1)) then a 3x3 conv without padding: the conv's padding is 1, its
        // output 8 x 8 as with padding=1.
        const TempFile f(paddedConvModel({0, 0, 1, 1, 0, 0, 1, 1}), "pad_conv");
        const ModelSpec spec = config::importOnnx({f.path, {}, {}, false}, Throwing());
        REQUIRE(spec.layers.size() == 1);
        CHECK(spec.layers[0].kind == LayerKind::Conv2d);
        CHECK(spec.layers[0].padding == std::array<uint32_t, 2>{1, 1});
        CHECK(spec.layers[0].inputs == std::vector<std::string>{"input"});
        CHECK(errorOf(onnxConfig(f.path)) == "no error");
    }
    {
        // All zeros (DenseNet's transitions): the pad is its input.
        const TempFile f(paddedConvModel({0, 0, 0, 0, 0, 0, 0, 0}, 6), "pad_zero");
        const ModelSpec spec = config::importOnnx({f.path, {}, {}, false}, Throwing());
        CHECK(spec.layers.at(0).padding == std::array<uint32_t, 2>{0, 0});
        CHECK(spec.layers.at(0).inputs == std::vector<std::string>{"input"});
    }
    {
        // Any other pad is a pad layer before the convolution: unequal sides, one-sided, a
        // reflection, read by the host too, of another value.
        const auto padLayer = [](const onnx::ModelProto& m, const std::string& name) {
            const TempFile f(m, name);
            const ModelSpec spec = config::importOnnx({f.path, {}, {}, false}, Throwing());
            REQUIRE(spec.layers.size() == 2);
            CHECK(spec.layers[1].kind == LayerKind::Conv2d);
            CHECK(spec.layers[1].padding == std::array<uint32_t, 2>{0, 0});
            CHECK(spec.layers[0].kind == LayerKind::Pad);
            return spec.layers[0];
        };
        CHECK(padLayer(paddedConvModel({0, 0, 2, 0, 0, 0, 0, 2}, 8), "pad_apart").pads == std::vector<uint64_t>{0, 0, 2, 0, 0, 2});
        CHECK(padLayer(paddedConvModel({0, 0, 0, 0, 0, 0, 2, 2}, 8), "pad_one_sided").pads == std::vector<uint64_t>{0, 0, 0, 2, 0, 2});
        onnx::ModelProto reflect = paddedConvModel({0, 0, 1, 1, 0, 0, 1, 1});
        auto* mode = reflect.mutable_graph()->mutable_node(0)->add_attribute();
        mode->set_name("mode");
        mode->set_type(onnx::AttributeProto_AttributeType_STRING);
        mode->set_s("reflect");
        CHECK(padLayer(reflect, "pad_reflect").padMode == PadMode::Reflect);
        onnx::ModelProto shown = paddedConvModel({0, 0, 1, 1, 0, 0, 1, 1});
        declare(shown.mutable_graph()->add_output(), "padded", {1, 3, 10, 10});
        CHECK(padLayer(shown, "pad_output").padMode == PadMode::Constant);
        onnx::ModelProto valued = paddedConvModel({0, 0, 1, 1, 0, 0, 1, 1});
        constant(valued.mutable_graph(), "one", {1.0f});
        valued.mutable_graph()->mutable_node(0)->add_input("one");
        CHECK(padLayer(valued, "pad_value").pads == std::vector<uint64_t>{0, 0, 1, 1, 1, 1});
        // What a pad cannot be: of the batch, a crop, another mode.
        const auto unshaped = [](onnx::ModelProto m) { // the output's shape left to inference
            m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
            return m;
        };
        const TempFile batch(unshaped(paddedConvModel({1, 0, 1, 1, 0, 0, 1, 1})), "pad_batch");
        CHECK_THAT(errorOf(onnxConfig(batch.path)),
                   Catch::Contains("ONNX node \"/pad/Pad\" (Pad): expected no padding of the batch (dimension 0), found pads [1, 0, 1, 1, 0, 0, 1, 1]"));
        const TempFile crop(unshaped(paddedConvModel({0, 0, -1, -1, 0, 0, 1, 1})), "pad_crop");
        CHECK_THAT(errorOf(onnxConfig(crop.path)), Catch::Contains("(Pad): expected pads of 0 to 65535 (a negative pad crops)"));
        mode->set_s("wrap");
        const TempFile wrap(reflect, "pad_wrap");
        CHECK_THAT(errorOf(onnxConfig(wrap.path)), Catch::Contains("(Pad): expected mode \"constant\", \"reflect\" or \"edge\", found \"wrap\""));
    }
    {
        // MaxPool2d(3, stride=2, ceil_mode=True) of 8 x 8: ceil(5 / 2) + 1 = 4 windows a side,
        // floor mode 3; then torch.cat of one tensor is that tensor.
        onnx::ModelProto m = convModel();
        auto* g = m.mutable_graph();
        g->mutable_node(0)->set_output(0, "c");
        auto* pool = node(g, "/pool/MaxPool", "MaxPool", {"c"}, {"p"});
        intsAttr(pool, "kernel_shape", {3, 3});
        intsAttr(pool, "strides", {2, 2});
        intAttr(pool, "ceil_mode", 1);
        intAttr(node(g, "/cat/Concat", "Concat", {"p"}, {"output"}), "axis", 1);
        declare(g->mutable_output(0), "output", {1, 4, 4, 4});
        const TempFile f(m, "ceil_pool");
        const ModelSpec spec = config::importOnnx({f.path, {}, {}, false}, Throwing());
        REQUIRE(spec.layers.size() == 2);
        CHECK(spec.layers[1].ceilMode);
        CHECK(spec.outputs == std::vector<std::string>{"/pool/MaxPool"});
        ModelGraphInfo info;
        const Graph graph = buildModelGraph(spec, 1, Precision::FP16, Precision::FP16, false, Throwing(), info);
        CHECK(graph.tensor(info.outputs.at(0)).shape == std::vector<uint64_t>{1, 4, 4, 4});
    }
}

TEST_CASE("ONNX import: torch's exact GELU (x / sqrt 2, Erf, + 1, times x, times 0.5) is one gelu, Erf alone is erf", "[onnx]")
{
    // The MLP with its ReLU (h -> r) replaced by the pattern.
    onnx::ModelProto m = mlpModel();
    auto* g = m.mutable_graph();
    const onnx::NodeProto gemm = g->node(0), transpose = g->node(2), matmul = g->node(3);
    g->clear_node();
    *g->add_node() = gemm;
    constant(g, "sqrt2", {1.4142135f});
    constant(g, "one", {1.0f});
    constant(g, "half", {0.5f});
    node(g, "/act/Div", "Div", {"h", "sqrt2"}, {"d"});
    node(g, "/act/Erf", "Erf", {"d"}, {"e"});
    node(g, "/act/Add", "Add", {"e", "one"}, {"a"});
    node(g, "/act/Mul", "Mul", {"h", "a"}, {"t"});
    node(g, "/act/Mul_1", "Mul", {"t", "half"}, {"r"});
    *g->add_node() = transpose;
    *g->add_node() = matmul;
    const TempFile f(m, "gelu_erf");
    const ModelSpec spec = config::importOnnx({f.path, {}, {}, false}, Throwing());
    std::vector<LayerKind> kinds;
    for (const auto& l : spec.layers)
        kinds.push_back(l.kind);
    CHECK(kinds == std::vector<LayerKind>{LayerKind::Linear, LayerKind::Gelu, LayerKind::Linear});
    CHECK(spec.layers[1].inputs == std::vector<std::string>{"/fc1/Gemm"});
    CHECK(spec.layers[2].inputs == std::vector<std::string>{spec.layers[1].name});
    CHECK(spec.layers[1].origin == "ONNX nodes \"/act/Div\" to \"/act/Mul_1\" (GELU, erf form)");
    // Another constant than sqrt(2) is not the pattern: a scale, then erf, add, mul, scale.
    g->mutable_node(4)->set_input(1, "one"); // the Div
    const TempFile other(m, "not_gelu");
    kinds.clear();
    for (const auto& l : config::importOnnx({other.path, {}, {}, false}, Throwing()).layers)
        kinds.push_back(l.kind);
    CHECK(kinds == std::vector<LayerKind>{LayerKind::Linear, LayerKind::Scale, LayerKind::Erf, LayerKind::Scale, LayerKind::Mul,
                                          LayerKind::Scale, LayerKind::Linear});
}

namespace {

/** A Constant node writing int64 `values` (a 1-D tensor) to `out`. */
void intConstant(onnx::GraphProto* g, const std::string& out, std::vector<int64_t> values)
{
    auto* a = node(g, "/" + out, "Constant", {}, {out})->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto_DataType_INT64);
    a->mutable_t()->add_dims(int64_t(values.size()));
    for (int64_t v : values)
        a->mutable_t()->add_int64_data(v);
}

/** A token model as GPT-2's head writes it, exported at batch 2: x [2, 4, 8] through a linear
 *  layer to [2, 4, 16], logits.reshape(-1, 16) against labels.reshape(-1), the logits split in two
 *  halves and added, and an attention-like detour that moves the batch (transpose(1, 0, 2), a
 *  softmax, and back). */
onnx::ModelProto tokenModel()
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    declare(g->add_input(), "x", {2, 4, 8});
    declare(g->add_input(), "labels", {2, 4}, onnx::TensorProto_DataType_INT64);
    declare(g->add_input(), "fc.weight", {8, 16});
    intsAttr(node(g, "/t/Transpose", "Transpose", {"x"}, {"xt"}), "perm", {1, 0, 2}); // [4, 2, 8]: the batch at 1
    node(g, "/t/Softmax", "Softmax", {"xt"}, {"st"});
    intsAttr(node(g, "/t/Transpose_1", "Transpose", {"st"}, {"s"}), "perm", {1, 0, 2});
    node(g, "/fc/MatMul", "MatMul", {"s", "fc.weight"}, {"h"});
    intConstant(g, "rows", {-1, 16});
    node(g, "/Reshape", "Reshape", {"h", "rows"}, {"flat"}); // [8, 16]: the batch folded with S = 4
    intConstant(g, "halves", {8, 8});
    intAttr(node(g, "/Split", "Split", {"flat", "halves"}, {"a", "b"}), "axis", 1);
    node(g, "/Add", "Add", {"a", "b"}, {"logits"});
    intConstant(g, "all", {-1});
    node(g, "/Reshape_1", "Reshape", {"labels", "all"}, {"flat_labels"});
    node(g, "/loss", "SoftmaxCrossEntropyLoss", {"logits", "flat_labels"}, {"loss"});
    declare(g->add_output(), "loss", {});
    return m;
}

} // namespace

TEST_CASE("ONNX import: the batch followed through reshapes that fold it and transposes that move it", "[onnx][batch]")
{
    const TempFile f(tokenModel(), "token");
    const ModelSpec spec = config::importOnnx({f.path, {}, {}, false}, Throwing());
    std::map<std::string, const LayerSpec*> layer;
    for (const auto& l : spec.layers)
        layer[l.name] = &l;
    // Per sample: the transposes are [S, D] -> [S, D] views (the batch moves, not the sample's
    // dimensions), the reshape [4, 16], the halves [0, 8) and [8, 16) of dimension 2 (the last).
    CHECK(layer.at("/t/Transpose")->perm == std::vector<uint32_t>{0, 1, 2});
    CHECK(layer.at("/t/Transpose_1")->perm == std::vector<uint32_t>{0, 1, 2});
    CHECK(layer.at("/Reshape")->shape == std::vector<int64_t>{4, 16});
    CHECK(layer.at("/Reshape_1")->shape == std::vector<int64_t>{4});
    CHECK((layer.at("/Split:0")->axis == 2 && layer.at("/Split:0")->start == 0 && layer.at("/Split:0")->end == 8));
    CHECK((layer.at("/Split:1")->axis == 2 && layer.at("/Split:1")->start == 8 && layer.at("/Split:1")->end == 16));
    CHECK(layer.at("/loss")->kind == LayerKind::CrossEntropy);
    // It trains: 4 tokens a sample, each a linear layer of 8 x 16 (2 x 128 FLOPs) forward.
    const Experiment e = build(onnxConfig(f.path, {{"mode", "train"}}));
    CHECK(e.schedule.modelFlopsPerSample >= 4 * 2 * 128);

    // Errors: a reshape that cuts the batch's runs, an op along the batch.
    onnx::ModelProto cutting;
    cutting.set_ir_version(8);
    cutting.add_opset_import()->set_version(17);
    auto* g = cutting.mutable_graph();
    declare(g->add_input(), "x", {2, 3, 2});
    intsAttr(node(g, "/Transpose", "Transpose", {"x"}, {"xt"}), "perm", {1, 0, 2}); // [3, 2, 2]: runs of 2 a sample, 4 apart
    intConstant(g, "shape", {4, 3});
    node(g, "/Reshape", "Reshape", {"xt", "shape"}, {"y"}); // rows of 3 cut the runs
    declare(g->add_output(), "y", {4, 3});
    const TempFile cut(cutting, "token_cut");
    CHECK_THAT(errorOf(onnxConfig(cut.path)), Catch::Contains("ONNX node \"/Reshape\" (Reshape): expected each sample's elements to stay "
                                                              "together: reshaping [3, 2, 2] to [4, 3] splits the batch of 2 across dimensions"));
    onnx::ModelProto bad = tokenModel();
    auto* concat = bad.mutable_graph()->mutable_node(1); // the softmax of [4, 2, 8] -> a concat along the batch
    concat->set_op_type("Concat");
    concat->add_input("xt");
    intAttr(concat, "axis", 1);
    const TempFile along(bad, "token_along");
    CHECK_THAT(errorOf(onnxConfig(along.path)),
               Catch::Contains("ONNX node \"/t/Softmax\" (Concat): expected an axis other than the batch's: dimension 1 of [4, 2, 8] holds the batch"));
}

TEST_CASE("ONNX import: Pow by a constant 0.5, -1 or 1 is sqrt, reciprocal or the operand, by another a pow, and Reciprocal reciprocal", "[onnx]")
{
    const auto kindsOf = [](float exponent, const std::string& op) {
        onnx::ModelProto m = mlpModel();
        auto* g = m.mutable_graph();
        constant(g, "c", {exponent});
        g->mutable_node(1)->set_op_type(op); // the ReLU
        if (op == "Pow")
            g->mutable_node(1)->add_input("c");
        const TempFile f(m, "pow");
        std::vector<LayerKind> kinds;
        for (const auto& l : config::importOnnx({f.path, {}, {}, false}, Throwing()).layers)
            kinds.push_back(l.kind);
        return kinds;
    };
    using K = std::vector<LayerKind>;
    CHECK(kindsOf(0.5f, "Pow") == K{LayerKind::Linear, LayerKind::Sqrt, LayerKind::Linear});
    CHECK(kindsOf(-1.0f, "Pow") == K{LayerKind::Linear, LayerKind::Reciprocal, LayerKind::Linear});
    CHECK(kindsOf(1.0f, "Pow") == K{LayerKind::Linear, LayerKind::Linear});
    CHECK(kindsOf(0.0f, "Reciprocal") == K{LayerKind::Linear, LayerKind::Reciprocal, LayerKind::Linear});
    CHECK(kindsOf(2.0f, "Pow") == K{LayerKind::Linear, LayerKind::Pow, LayerKind::Linear});
    CHECK(kindsOf(-0.5f, "Pow") == K{LayerKind::Linear, LayerKind::Pow, LayerKind::Linear});
}

TEST_CASE("ONNX import: ReduceMean and ReduceSum over consecutive axes after the batch are a reduce, c / x a reciprocal", "[onnx]")
{
    // The 3 -> 4 channel convolution's [1, 4, 8, 8] output reduced as `op` over `axes`.
    const auto reduced = [](const std::string& op, std::vector<int64_t> axes, int64_t keep = 1) {
        onnx::ModelProto m = convModel();
        auto* g = m.mutable_graph();
        g->mutable_node(0)->set_output(0, "y");
        onnx::NodeProto* r = nullptr;
        if (op == "ReduceSum") {
            auto* a = g->add_initializer();
            a->set_name("axes");
            a->set_data_type(onnx::TensorProto_DataType_INT64);
            a->add_dims(int64_t(axes.size()));
            for (int64_t v : axes)
                a->add_int64_data(v);
            r = node(g, "/r", op, {"y", "axes"}, {"output"});
        } else {
            r = node(g, "/r", op, {"y"}, {"output"});
            intsAttr(r, "axes", axes);
        }
        intAttr(r, "keepdims", keep);
        g->mutable_output(0)->Clear();
        g->mutable_output(0)->set_name("output");
        return m;
    };
    const auto layers = [](const onnx::ModelProto& m, const std::string& name) {
        const TempFile f(m, name);
        return config::importOnnx({f.path, {}, {}, false}, Throwing()).layers;
    };
    // x.mean([2, 3]) stays global average pooling, as popnn pools.
    CHECK(layers(reduced("ReduceMean", {2, 3}), "mean23").back().kind == LayerKind::GlobalAvgPool);
    const auto last = layers(reduced("ReduceMean", {-1}, 0), "mean_last").back();
    CHECK(last.kind == LayerKind::Reduce);
    CHECK(last.perm == std::vector<uint32_t>{3});
    CHECK((last.mean && !last.keepDim));
    const auto channels = layers(reduced("ReduceSum", {1, 2}), "sum12").back();
    CHECK(channels.kind == LayerKind::Reduce);
    CHECK(channels.perm == std::vector<uint32_t>{1, 2});
    CHECK((!channels.mean && channels.keepDim));
    // Axes with the batch would mix the samples; axes apart are not one reduce.
    CHECK_THAT(errorOf(onnxConfig(TempFile(reduced("ReduceSum", {0}), "sum0").path)),
               Catch::Contains("ONNX node \"/r\" (ReduceSum): expected an axis after the batch (1 to 3), found 0"));
    CHECK_THAT(errorOf(onnxConfig(TempFile(reduced("ReduceMean", {1, 3}), "mean13").path)),
               Catch::Contains("ONNX node \"/r\" (ReduceMean) dims: expected consecutive dimensions from 1 to 3 of [4, 4, 8, 8] (0 is the "
                                               "batch), found [1, 3]"));
    // c / x: popops' DIVIDE map of a scalar and x, priced as a reciprocal whatever c.
    onnx::ModelProto m = mlpModel();
    auto* g = m.mutable_graph();
    constant(g, "c", {2.0f});
    g->mutable_node(3)->set_output(0, "mm");
    node(g, "/Div", "Div", {"c", "mm"}, {"output"});
    CHECK(layers(m, "div").back().kind == LayerKind::Reciprocal);
}

TEST_CASE("ONNX import: weights packed by Concat (an RNN's gates) are a weight", "[onnx]")
{
    // fc2's [10, 1024] weight as two [5, 1024] halves concatenated, then transposed.
    onnx::ModelProto m = mlpModel();
    auto* g = m.mutable_graph();
    declare(g->mutable_input(3), "fc2.top", {5, 1024});
    declare(g->add_input(), "fc2.bottom", {5, 1024});
    const onnx::NodeProto gemm = g->node(0), relu = g->node(1), transpose = g->node(2), matmul = g->node(3);
    g->clear_node();
    *g->add_node() = gemm;
    *g->add_node() = relu;
    intAttr(node(g, "/fc2/Concat", "Concat", {"fc2.top", "fc2.bottom"}, {"fc2.weight"}), "axis", 0);
    *g->add_node() = transpose;
    *g->add_node() = matmul;
    const TempFile f(m, "packed");
    const ModelSpec spec = config::importOnnx({f.path, {}, {}, false}, Throwing());
    REQUIRE(spec.layers.size() == 3);
    CHECK(spec.layers[2].kind == LayerKind::Linear);
    CHECK(spec.layers[2].features == 10);
    CHECK(spec.inputs.size() == 1); // the halves are weights, not data
}

TEST_CASE("ONNX import: inputs named as buffers are model tensors that are not learned", "[onnx]")
{
    // relu1's output scaled by a buffer [1024] read through an Identity (a view of it).
    onnx::ModelProto m = mlpModel();
    auto* g = m.mutable_graph();
    declare(g->add_input(), "scale", {1024});
    const onnx::NodeProto gemm = g->node(0), relu = g->node(1), transpose = g->node(2);
    onnx::NodeProto matmul = g->node(3);
    matmul.set_input(0, "rs"); // fc2 reads the scaled activation
    g->clear_node();
    *g->add_node() = gemm;
    *g->add_node() = relu;
    node(g, "/scale/Identity", "Identity", {"scale"}, {"scale_view"});
    node(g, "/scale/Mul", "Mul", {"r", "scale_view"}, {"rs"});
    *g->add_node() = transpose;
    *g->add_node() = matmul;
    const TempFile f(m, "buffer");
    auto parameterOf = [](const ModelSpec& spec) {
        const auto it = std::find_if(spec.layers.begin(), spec.layers.end(), [](const LayerSpec& l) { return l.kind == LayerKind::Parameter; });
        REQUIRE(it != spec.layers.end());
        return *it;
    };
    CHECK(parameterOf(config::importOnnx({f.path, {}, {}, false, false, {"scale"}}, Throwing())).learned == false);
    CHECK(parameterOf(config::importOnnx({f.path, {}, {}, false}, Throwing())).learned == true); // unnamed: learned
    // In training, the buffer's bytes are a buffer's, not a weight's, and it has no optimizer state.
    const Experiment e = build(onnxConfig(f.path, {{"mode", "train"}, {"loss", "cross_entropy"}, {"buffers", {"scale"}}}));
    std::map<std::string, uint64_t> bytes;
    for (const auto& t : e.schedule.programs.at(0).tensors)
        for (const auto& r : t.bytes.runs())
            bytes[t.kind] += uint64_t(r.count) * r.value;
    const uint64_t buffer = bytes["buffer"], state = bytes["optimizer state"];
    CHECK(buffer == 4 * 1024);
    CHECK(state == 2 * 4 * (1024 * 784 + 1024 + 10 * 1024)); // AdamW's two moments of the layers' weights only

    CHECK_THAT(errorOf(onnxConfig(f.path, {{"buffers", {"scale", "nope"}}})),
               Catch::Contains("/workload/buffers/1: expected the name of a graph input or initializer of \"" + f.path + "\", found \"nope\""));
    CHECK_THAT(errorOf(onnxConfig(f.path, {{"buffers", {"input"}}, {"inputs", {{"input", {784}}}}})),
               Catch::Contains("/workload/buffers/0: expected a buffer or a data input, found \"input\" as both"));
    // A buffer in a layer's weight position is learned there (graph layers have no frozen weights).
    CHECK(errorOf(onnxConfig(f.path, {{"buffers", {"fc1.weight"}}})) == "no error");
}

TEST_CASE("ONNX import: an Einsum that is a batched matmul is one, its operands read transposed as views", "[onnx]")
{
    // Attention's scores and context as MaxViT writes them, over x [1, 2 heads, 4 tokens, 8].
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    declare(g->add_input(), "x", {1, 2, 4, 8});
    auto equation = [](onnx::NodeProto* n, const std::string& text) {
        auto* a = n->add_attribute();
        a->set_name("equation");
        a->set_type(onnx::AttributeProto_AttributeType_STRING);
        a->set_s(text);
    };
    equation(node(g, "/attn/Einsum", "Einsum", {"x", "x"}, {"s"}), "B H I D, B H J D -> B H I J");
    equation(node(g, "/attn/Einsum_1", "Einsum", {"s", "x"}, {"y"}), "bhij,bhjd->bhid");
    declare(g->add_output(), "y", {1, 2, 4, 8});
    const TempFile f(m, "einsum");
    const ModelSpec spec = config::importOnnx({f.path, {}, {}, false}, Throwing());
    REQUIRE(spec.layers.size() == 3);
    CHECK(spec.layers[0].kind == LayerKind::Transpose); // x's last two swapped for the scores
    CHECK(spec.layers[0].perm == std::vector<uint32_t>{0, 1, 3, 2});
    CHECK(spec.layers[1].kind == LayerKind::MatMul);
    CHECK(spec.layers[2].kind == LayerKind::MatMul);
    // 2 x multiply-adds a sample: 2 heads x 4 x 4 scores of 8, then 2 x 4 x 8 outputs of 4.
    const Experiment e = build(onnxConfig(f.path));
    CHECK(e.schedule.modelFlopsPerSample == 2 * (2 * 4 * 4 * 8 + 2 * 4 * 8 * 4));

    g->mutable_node(1)->mutable_attribute(0)->set_s("bhij,bhkd->bhid"); // nothing contracted alike
    const TempFile bad(m, "einsum_bad");
    CHECK_THAT(errorOf(onnxConfig(bad.path)), Catch::Contains("ONNX node \"/attn/Einsum_1\" (Einsum): unsupported op of equation "
                                                              "\"bhij,bhkd->bhid\" (of two operands, a batched matmul is supported"));
}
