// SPDX-License-Identifier: Apache-2.0
// The config.json reader's linear-layer state: the sizes of one linear (state-space, gated delta-rule)
// layer's convolution and SSM states, from each family's own keys, as vLLM 0.33.0 reads them.
#pragma once

#include <attnsel/model/impl/model_config/layer_kinds.hpp>
#include <attnsel/model/model_config.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

class linear_state_reader : public layer_kind_reader {
 public:
  using layer_kind_reader::layer_kind_reader;

 protected:
  // The state of the linear layers (model_config::state) of a model that has any, by its linear mode and
  // family. Each family's keys are those of its vLLM 0.33.0 model file's
  // get_mamba_state_shape_from_config; a key the family needs that config.json lacks leaves the state
  // unknown, and linear_state::unknown says why (transformers would fill in its class's default).
  void read_linear_state(model_config& c) const {
    const bool any = std::any_of(c.layers.begin(), c.layers.end(),
                                 [](layer_kind k) { return k == layer_kind::linear || k == layer_kind::hybrid; });
    if (!any) return;
    const std::string& type = c.model_type;
    std::string missing;
    // The integer at `key` in [1, 2^24], or 0 with `missing` set when it is absent or another value: a
    // state key never makes config.json unreadable, only the state unknown.
    const auto number = [&](std::string_view key) -> std::uint64_t {
      const std::string k(key);
      const nlohmann::json* v = present(*section_, k.c_str());
      if (v == nullptr || !v->is_number_integer() || v->get<std::int64_t>() < 1 ||
          v->get<std::int64_t>() > (std::int64_t{1} << 24)) {
        if (missing.empty())
          missing = k + (v == nullptr ? " absent" : " is " + kind(*v) + ", not an integer in [1, 2^24]");
        return 0;
      }
      return static_cast<std::uint64_t>(v->get<std::int64_t>());
    };
    linear_state s;
    const char* source = "";
    if (c.linear_mode == attention_mode::gated_delta && type.rfind("qwen3_", 0) == 0) {
      // qwen3_next.py / qwen3_5.py: gated_delta_net_state_shape.
      const auto k_heads = number("linear_num_key_heads");
      const auto v_heads = number("linear_num_value_heads");
      const auto k_dim = number("linear_key_head_dim");
      const auto v_dim = number("linear_value_head_dim");
      s.conv_kernel = static_cast<std::uint32_t>(number("linear_conv_kernel_dim"));
      s.conv_channels = 2 * k_heads * k_dim + v_heads * v_dim;
      s.ssm_heads = v_heads;
      s.ssm_head_elements = v_dim * k_dim;
      if (type.rfind("qwen3_5", 0) == 0) s.ssm_dtype = state_dtype("mamba_ssm_dtype", missing);
      source = type.rfind("qwen3_5", 0) == 0 ? "qwen3_5.py" : "qwen3_next.py";
    } else if (c.linear_mode == attention_mode::mamba2) {
      static constexpr struct {
        std::string_view type, file, heads, head_dim, groups, d_state, kernel;
        bool expand;  // the inner width is mamba_expand x hidden_size, else heads x head_dim
      } families[] = {
          {"nemotron_h", "nemotron_h.py", "mamba_num_heads", "mamba_head_dim", "n_groups", "ssm_state_size",
           "conv_kernel", false},
          {"granitemoehybrid", "granitemoehybrid.py", "mamba_n_heads", "mamba_d_head", "mamba_n_groups",
           "mamba_d_state", "mamba_d_conv", true},
          {"zamba2", "zamba2.py", "n_mamba_heads", "mamba_headdim", "mamba_ngroups", "mamba_d_state", "mamba_d_conv",
           true},
          {"falcon_h1", "falcon_h1.py", "mamba_n_heads", "mamba_d_head", "mamba_n_groups", "mamba_d_state",
           "mamba_d_conv", true},
      };
      const auto row =
          std::find_if(std::begin(families), std::end(families), [&](const auto& f) { return f.type == type; });
      if (row == std::end(families))
        return unknown(c, "attnsel does not read the Mamba-2 state keys of model_type '" + type + "'");
      const auto heads = number(row->heads);
      const auto head_dim = number(row->head_dim);
      const auto groups = number(row->groups);
      const auto d_state = number(row->d_state);
      s.conv_kernel = static_cast<std::uint32_t>(number(row->kernel));
      std::uint64_t inner = heads * head_dim;
      if (row->expand) {
        // Falcon-H1 states the width itself (mamba_d_ssm) where it has one.
        const nlohmann::json* d_ssm = type == "falcon_h1" ? present(*section_, "mamba_d_ssm") : nullptr;
        inner = d_ssm != nullptr ? number("mamba_d_ssm") : number("mamba_expand") * number("hidden_size");
      }
      s.conv_channels = inner;
      s.conv_groups = static_cast<std::uint32_t>(groups);
      s.conv_group_channels = 2 * d_state;
      s.ssm_heads = heads;
      s.ssm_head_elements = head_dim * d_state;
      if (type == "nemotron_h") {
        // config.py NemotronHForCausalLMConfig: the config's mamba_ssm_cache_dtype, else float32.
        if (present(*section_, "mamba_ssm_cache_dtype") == nullptr)
          s.ssm_dtype = data_type::float32;
        else
          s.ssm_dtype = state_dtype("mamba_ssm_cache_dtype", missing);
      }
      source = row->file.data();  // a literal: NUL-terminated
    } else if (c.linear_mode == attention_mode::mamba1 && type == "jamba") {
      // jamba.py: mamba1_state_shape over mamba_expand x hidden_size channels.
      const auto inner = number("mamba_expand") * number("hidden_size");
      s.conv_kernel = static_cast<std::uint32_t>(number("mamba_d_conv"));
      s.conv_channels = inner;
      s.ssm_heads = inner;
      s.ssm_head_elements = number("mamba_d_state");
      source = "jamba.py";
    } else {
      return unknown(c, "attnsel does not read the state of " + std::string(to_string(c.linear_mode)) +
                            " layers (model_type '" + type + "')");
    }
    if (!missing.empty()) return unknown(c, missing + " (vLLM 0.33.0 " + source + " reads it)");
    c.state = s;
  }

 private:
  static void unknown(model_config& c, std::string why) { c.state.unknown = std::move(why); }
  // A state dtype key ("float32", "bfloat16", "float16"), or none (the model's) when absent or "auto";
  // another value leaves the state unknown, `missing` saying why.
  std::optional<data_type> state_dtype(const char* key, std::string& missing) const {
    const nlohmann::json* v = present(*section_, key);
    if (v == nullptr || (v->is_string() && v->get<std::string>() == "auto")) return std::nullopt;
    if (v->is_string()) {
      const auto text = v->get<std::string>();
      if (text == "float32" || text == "bfloat16" || text == "float16") return parse_enum<data_type>(text);
    }
    if (missing.empty())
      missing = std::string(key) + " is " + kind(*v) + R"(, not "float32", "bfloat16", "float16" or "auto")";
    return std::nullopt;
  }
};

}  // namespace detail

ATTNSEL_END_NAMESPACE
