// SPDX-License-Identifier: MIT
// Following the batch through an exported model's reshapes and transposes (sim/config/OnnxBatch):
// each case worked by hand from the shapes torch writes.
#include "sim/config/OnnxBatch.hpp"

#include <catch2/catch.hpp>

using namespace ipusim::config;
using V = std::vector<int64_t>;
using U = std::vector<uint32_t>;

TEST_CASE("ONNX batch: a reshape keeps, folds and unfolds the batch", "[onnx][batch]")
{
    const BatchAt first{0, 1};
    // [B, S, D] -> [B, S, H, d] (heads split): the batch stays first, per sample [S, H, d].
    auto split = batchAfterReshape({2, 32, 64}, first, {2, 32, 4, 16}, 2);
    REQUIRE(split);
    CHECK(*split == first);
    CHECK(sampleShape({2, 32, 4, 16}, *split, 2) == V{32, 4, 16});
    // [B, S, V] -> [B*S, V] (logits.reshape(-1, V)): the batch's stride is S*V, which dimension
    // 0 of [64, 512] holds with S = 32 inside: per sample [32, 512], not leading.
    auto folded = batchAfterReshape({2, 32, 512}, first, {64, 512}, 2);
    REQUIRE(folded);
    CHECK(*folded == BatchAt{0, 32});
    CHECK(sampleShape({64, 512}, *folded, 2) == V{32, 512});
    CHECK_FALSE(leading({64, 512}, *folded, 2));
    // ... and back: [B*S, V] -> [B, S, V].
    auto unfolded = batchAfterReshape({64, 512}, *folded, {2, 32, 512}, 2);
    REQUIRE(unfolded);
    CHECK(*unfolded == first);
    // nn.MultiheadAttention: [S, B, E] (batch at 1) -> [S, B*H, hd]: stride E = H*hd, in
    // dimension 1 with H inside; per sample [S, H, hd].
    auto heads = batchAfterReshape({10, 2, 64}, {1, 1}, {10, 8, 16}, 2);
    REQUIRE(heads);
    CHECK(*heads == BatchAt{1, 4});
    CHECK(sampleShape({10, 8, 16}, *heads, 2) == V{10, 4, 16});
    // A reshape is a view of the elements in order: [B, S, D] -> [32, 128] keeps each sample's
    // 2,048 elements together (16 rows each), but [S, B, E] = [2, 2, 3] -> [3, 4] cuts the
    // batch's runs of 3 across rows of 4: no dimension holds the batch.
    CHECK(*batchAfterReshape({2, 32, 64}, first, {32, 128}, 2) == BatchAt{0, 16});
    CHECK_FALSE(batchAfterReshape({2, 2, 3}, {1, 1}, {3, 4}, 2));
}

TEST_CASE("ONNX batch: a batch of one goes to a dimension of one, else nowhere, else innermost", "[onnx][batch]")
{
    // [1, S, D] -> [1, S, H, d]: the dimension of one at the batch's stride.
    CHECK(*batchAfterReshape({1, 32, 64}, {0, 1}, {1, 32, 4, 16}, 1) == BatchAt{0, 1});
    // [1, S, V] -> [S, V]: outermost, no dimension of its own; per sample [S, V].
    const auto none = batchAfterReshape({1, 32, 512}, {0, 1}, {32, 512}, 1);
    CHECK(*none == BatchAt{-1, 1});
    CHECK(sampleShape({32, 512}, *none, 1) == V{32, 512});
    CHECK(leading({32, 512}, *none, 1));
    // [S, 1, E] -> [S, 1*H, hd]: innermost, as a batch of two would be.
    CHECK(*batchAfterReshape({10, 1, 64}, {1, 1}, {10, 4, 16}, 1) == BatchAt{1, 4});
}

TEST_CASE("ONNX batch: axes and transposes as a layer's, the batch first", "[onnx][batch]")
{
    // [S, B, E] (batch pure at 1): axis 2 is the layer's 2 ([batch, S, E]), axis 1 the batch.
    CHECK(layerAxis({10, 2, 64}, {1, 1}, 2, 2) == 2u);
    CHECK(layerAxis({10, 2, 64}, {1, 1}, 2, 0) == 1u);
    CHECK_FALSE(layerAxis({10, 2, 64}, {1, 1}, 2, 1));
    // Folded ([B*H, S, hd] with H inside): the dimensions stay, each one after the batch.
    CHECK(layerAxis({8, 10, 16}, {0, 4}, 2, 2) == 3u);
    CHECK_FALSE(layerAxis({8, 10, 16}, {0, 4}, 2, 0));
    // [B, S, E] -> transpose(1, 0, 2) -> [S, B, E]: per sample the identity, the batch to 1.
    CHECK(layerPerm({2, 10, 64}, {0, 1}, 2, {1, 0, 2}) == U{0, 1, 2});
    CHECK(batchAfterTranspose({0, 1}, {1, 0, 2}) == BatchAt{1, 1});
    // [B, H, S, d] -> (0, 2, 1, 3): per sample [S, H, d], as the graph's transpose [0, 2, 1, 3].
    CHECK(layerPerm({2, 4, 32, 16}, {0, 1}, 2, {0, 2, 1, 3}) == U{0, 2, 1, 3});
    // Folded [B*H, S, d] -> (0, 2, 1): every dimension kept, the batch stays in the first.
    CHECK(layerPerm({8, 10, 16}, {0, 4}, 2, {0, 2, 1}) == U{0, 1, 3, 2});
    CHECK(batchAfterTranspose({0, 4}, {0, 2, 1}) == BatchAt{0, 4});
}
