"""Published numbers, with their sources, next to what bubblekit computes for them.

Every number typed in this module was read in a public source and carries a
:class:`Source` (paper or README, table or section, year). Values that a source does not
give, and that a case study still needs (a micro-batch size, a number of chunks, a GPU
price), are *assumptions*: they live in the ``assumptions`` fields, in words, and every
function takes them as arguments so a reader can change them.

Contents:

* the zero-bubble paper (Qi et al., ICLR 2024, arXiv 2401.10241): the profiled
  ``T_F, T_B, T_W, T_comm`` of its evaluation (Table 9) and the bubble rates it computed
  from them (Table 5), reproduced with :func:`zb_table5_comparison`;
* the closed forms of the zero-bubble README (as it reads since 2024-07-03, with its history in
  :data:`ZB_README_HISTORY`) and of the DualPipe README (its DualPipe and DualPipeV rows on the
  README's basis, the same number of stages) (:func:`zb_readme_comparison`,
  :func:`dualpipe_readme_comparison`);
* four training configurations for lesson 08 (:data:`CASES`): Megatron-LM's weak-scaling
  table (Narayanan et al., SC21, Table 1), BLOOM-176B, Llama 3 405B and DeepSeek-V3, with
  :func:`case_estimate` for the bubble (always simulated, DualPipe included: :func:`case_result`),
  the idle GPU-hours and their cost;
* each comparison as a :class:`~bubblekit.text.Table` for lessons 07x and 08 (one call per table,
  headers in the learner's language): :func:`zb_readme_table`, :func:`dualpipe_readme_table`,
  :func:`zb_table5_table`, :func:`case_worksheet`, :func:`lever_table`, ...

Bubble conventions (lesson 00, README): ``bubble_ratio`` = idle / (ranks x makespan);
``bubble_overhead`` = idle / busy. The zero-bubble paper's *bubble rate* is a third
measure, :func:`stage_span_bubble_rate`: it measures each rank from its own first action
to its own last one (so the start-up and flush corners of a parallelogram-shaped
schedule do not count, because with the optimizer synchronization bypassed the next
step's work fills them).

Pure core: imports no matplotlib, widgets or torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bubblekit._validate import check_int, check_number
from bubblekit.costs import Costs
from bubblekit.formulas import bubble_ratio
from bubblekit.i18n import all_messages, get_language, register, tr, translate
from bubblekit.schedules import schedule
from bubblekit.simulator import SimResult, simulate
from bubblekit.text import Table
from bubblekit.timeline import Timeline

__all__ = [
    "Source",
    "SOURCES",
    "ZBProfiled",
    "ZB_PROFILED",
    "ZB_TABLE5",
    "ZB_TABLE5_COLUMNS",
    "zb_costs",
    "stage_span_bubble_rate",
    "stage_span_overhead",
    "max_rank_bubble_time",
    "Table5Row",
    "zb_table5_comparison",
    "ReadmeRow",
    "ZB_README",
    "ZB_README_HISTORY",
    "zb_readme_comparison",
    "DUALPIPE_README",
    "dualpipe_bubble_time",
    "dualpipe_readme_comparison",
    "zb_readme_history_table",
    "zb_readme_table",
    "zb_readme_notes",
    "dualpipe_readme_table",
    "zb_table5_table",
    "zb_search_table",
    "zero_figure1_table",
    "activation_formula_table",
    "MegatronRow",
    "MEGATRON_TABLE1",
    "megatron_training_days",
    "Case",
    "CASES",
    "CaseEstimate",
    "case_estimate",
    "case_result",
    "case_microbatches",
    "DEFAULT_USD_PER_GPU_HOUR",
    "replace_case",
    "closed_form_check",
    "MEGATRON_1T_TOKENS",
    "MEGATRON_1T_DAYS_PUBLISHED",
]

register({
    # the README comparisons' notes (lesson 07x)
    "published.note.zb1p": {"en": "its bubble time is exactly a third of 1F1B's; 'B/3' divides it by 1F1B's step, over its own "
                                  "shorter step it is (p-1)/(3m+p-1)",
                            "zh": "它的气泡时间恰好是 1F1B 的三分之一；“B/3”是除以 1F1B 的单步耗时得到的，"
                                  "按它自己更短的单步耗时算则是 (p-1)/(3m+p-1)"},
    "published.note.zb2p": {"en": "peak is 2p-1 = {peak} microbatch activations, '2x' rounds it; bubble 0 needs m >= 2p-1 "
                                  "and counts per-stage spans (bubble_ratio over the whole makespan is larger)",
                            "zh": "峰值是 2p − 1 = {peak} 个微批的激活，“2x”是取整后的值；气泡为 0 要求 m ≥ 2p − 1，"
                                  "并且按每个流水级各自的时间跨度计（按整步算的 bubble_ratio 更大）"},
    "published.note.zbv": {"en": "two chunks per rank in a V: every microbatch crosses 2(p-1) rank boundaries instead of p-1",
                           "zh": "每个 rank 两个 chunk，排成 V 形：每个微批要跨 2(p-1) 个 rank 边界，而不是 p-1 个"},
    "published.note.v": {"en": "peak {peak} = {value:g} of 1F1B's p = {p}: '{memory}' is the limit for large p; "
                               "the bubble is about the README's fraction of B",
                         "zh": "峰值 {peak} = {value:g}，而 1F1B 是 p = {p}：“{memory}”是 p 很大时的极限；"
                               "气泡接近 README 表中这一行给出的值"},
    "published.note.dualpipe": {"en": "two directions on PP ranks, each rank holds one stage of each: 2 copies of the model; "
                                      "the formula is exact when I = F and W <= F, with each F&B pair one unit",
                                "zh": "PP 个 rank 上跑两个方向，每个 rank 在每个方向各持有一个流水级：模型有 2 份副本；"
                                      "当 I = F、W ≤ F 且每个 F&B 对作为一个整体时，公式是精确的"},
    "published.note.dualpipev": {"en": "DualPipe cut in half: PP stages in a V on PP/2 ranks, one copy of the model; "
                                       "'2x' parameters per device only because there are half as many devices",
                                 "zh": "把 DualPipe 对半切：PP 个流水级排成 V 形放在 PP/2 个 rank 上，模型只有一份；"
                                       "每个设备的参数量是“2x”，只是因为设备数减半了"},
    # the four case studies (lesson 08); column keys stay English
    "published.col.case": {"en": "case", "zh": "案例"},
    "published.col.gpus": {"en": "GPUs", "zh": "GPU 数"},
    "published.col.v_chunks": {"en": "v (chunks per rank)", "zh": "v（每个 rank 的 chunk 数）"},
    "published.col.from": {"en": "from", "zh": "出处"},
    "published.col.quantity": {"en": "quantity", "zh": "项目"},
    "published.col.value": {"en": "value", "zh": "值"},
    "published.col.schedule": {"en": "schedule", "zh": "调度"},
    "published.col.gpu_hours": {"en": "GPU-hours", "zh": "GPU 小时数"},
    "published.col.idle_hours": {"en": "idle GPU-hours", "zh": "空闲 GPU 小时数"},
    "published.col.idle_usd": {"en": "idle USD", "zh": "空闲成本"},
    "published.col.option": {"en": "option", "zh": "方案"},
    "published.col.note": {"en": "note", "zh": "说明"},
    "published.layouts.title": {"en": "How each run divides its GPUs", "zh": "各任务如何划分 GPU"},
    "published.layouts.note": {"en": "v is assumed for Megatron-LM 1T and Llama 3 405B (not published); EP splits the experts "
                                     "over GPUs of the DP dimension, so it does not multiply the GPU count",
                               "zh": "Megatron-LM 1T 和 Llama 3 405B 的 v 是假设值（未公开）；EP 把专家分布到 DP 维度的 GPU 上，"
                                     "所以不会额外乘进 GPU 总数"},
    "published.ws.gpus": {"en": "GPUs", "zh": "GPU 数"},
    "published.ws.pp": {"en": "PP: pipeline stages p", "zh": "PP：流水级数 p"},
    "published.ws.dp": {"en": "DP: pipelines (data-parallel replicas)", "zh": "DP：流水线条数（数据并行副本数）"},
    "published.ws.dp_from": {"en": "computed: GPUs / (TP × CP × PP)", "zh": "计算：GPU 数 / (TP × CP × PP)"},
    "published.ws.batch": {"en": "global batch GBS (sequences per step)", "zh": "全局批大小 GBS（每步的序列数）"},
    "published.ws.micro": {"en": "micro-batch b (sequences)", "zh": "微批大小 b（序列数）"},
    "published.ws.m": {"en": "m = GBS / (DP × b): microbatches per pipeline", "zh": "m = GBS / (DP × b)：每条流水线的微批数"},
    "published.ws.computed": {"en": "computed", "zh": "计算得出"},
    "published.ws.schedule": {"en": "schedule", "zh": "调度"},
    "published.ws.ratio": {"en": "bubble_ratio = idle / (p × makespan)", "zh": "气泡比例 = 空闲 / (p × 单步耗时)"},
    "published.ws.ratio_from": {"en": "computed: {method}", "zh": "计算：{method}"},
    "published.ws.overhead": {"en": "bubble_overhead = idle / busy", "zh": "气泡开销（Megatron 口径）= 空闲 / 忙碌"},
    "published.ws.overhead_from": {"en": "computed, same run", "zh": "计算（同上）"},
    "published.ws.hours": {"en": "GPU-hours of the run", "zh": "任务总 GPU 小时数"},
    "published.ws.idle": {"en": "idle GPU-hours = bubble_ratio × GPU-hours", "zh": "空闲 GPU 小时数 = 气泡比例 × GPU 小时数"},
    "published.ws.price": {"en": "price (USD per GPU-hour)", "zh": "价格（美元 / GPU 小时）"},
    "published.ws.price_from": {"en": "assumed: the DeepSeek-V3 report's H800 rental", "zh": "假设：DeepSeek-V3 报告中的 H800 租用价格"},
    "published.ws.cost": {"en": "idle cost", "zh": "空闲成本"},
    "published.ws.cost_from": {"en": "computed: idle GPU-hours × price", "zh": "计算：空闲 GPU 小时数 × 价格"},
    "published.ws.assumed": {"en": "assumed (see the note)", "zh": "假设（见表下说明）"},
    "published.ws.note": {"en": "model: equal stages, backward = 2 × forward (split into I = W = F where the schedule splits "
                                "it), no communication cost; assumed: {assumptions}",
                          "zh": "耗时模型：各流水级耗时相同，反向 = 2 × 前向（调度拆分反向时取 I = W = F），不计通信开销；假设：{assumptions}"},
    "published.studies.title": {"en": "Four published runs: the bubble their schedules imply (${usd:g} per GPU-hour)",
                                "zh": "四个案例：调度带来的气泡（每 GPU 小时 {usd:g} 美元）"},
    "published.studies.note": {"en": "bubble_ratio = idle / (p × makespan); bubble_overhead = idle / busy; estimates under each "
                                     "case's stated assumptions, not measurements",
                               "zh": "气泡比例 = 空闲 / (p × 单步耗时)；气泡开销（Megatron 口径）"
                                     "= 空闲 / 忙碌；这些是按各案例写明的假设做的估算，不是实测"},
    "published.options.refused": {"en": "not possible: {reason}", "zh": "不可行：{reason}"},
    "published.options.refused_rounds": {
        "en": "not possible with PyTorch's ScheduleInterleaved1F1B: m={m} for p={p} (its max(1, m // p) rounds must "
              "divide m; m = {below} or {above} would run)",
        "zh": "不可行。PyTorch 的 ScheduleInterleaved1F1B 把微批分成 max(1, m // p) 轮，轮数必须整除 m；"
              "p={p} 时 m={m} 不满足，最近的可用值是 m = {below} 或 {above}"},
    "published.options.note": {"en": "same model for every option: equal stages, backward = 2 × forward (split into I = W = F "
                                     "for ZB-H1 and DualPipe), no communication cost",
                               "zh": "所有方案用同一套耗时模型：各流水级耗时相同，反向 = 2 × 前向（调度拆分反向时取 I = W = F），"
                                     "不计通信开销"},
    "published.megatron.where": {"en": "{source}, Table 1, with the bubble_ratio each row implies",
                                 "zh": "{source}表 1，附各行对应的气泡比例"},
    # the Chinese title names the paper the way lesson 08 does; the English one keeps the full citation
    "published.megatron.source": {"en": "the Megatron-LM paper (Narayanan et al., SC21, arXiv 2104.04473)",
                                  "zh": "Megatron-LM 论文（Narayanan 等，SC21，arXiv 2104.04473）"},
    "published.megatron.note": {"en": "m assumes micro-batch {mb} (not published); v max = one layer per chunk; bubble_ratio = "
                                      "idle / (p × makespan) for equal stages, B = 2F, no communication cost",
                                "zh": "m 按微批大小为 {mb} 计算（论文未公开）；v 最大值 = 每个 chunk 一层；气泡比例"
                                      " = 空闲 / (p × 单步耗时)，按各流水级耗时相同、反向 = 2 × 前向、不计通信开销计算"},
    "published.megatron.params": {"en": "params (B)", "zh": "参数量（十亿）"},
    "published.megatron.layers": {"en": "layers", "zh": "层数"},
    "published.megatron.batch": {"en": "batch", "zh": "全局批大小"},
    "published.megatron.v_max": {"en": "v max", "zh": "v 最大值"},
    "published.megatron.inter": {"en": "interleaved, v max", "zh": "交错式，v 取最大"},
    "published.megatron.tflops": {"en": "TFLOP/s per GPU", "zh": "单卡 TFLOP/s"},
    # the cases' assumptions, shown under each worksheet (Case.assumptions keeps the English)
    "published.assume.mb1": {"en": "micro-batch size 1 (Table 1 does not give it)", "zh": "微批大小为 1（表 1 没有给出）"},
    "published.assume.megatron_v": {
        "en": "v = {v} chunks per rank (the most that {layers} layers on {pp} ranks allow; Table 1 does not give v)",
        "zh": "每个 rank v = {v} 个 chunk（{layers} 层分到 {pp} 个 rank 上最多能切这么多；表 1 没有给出 v）"},
    "published.assume.megatron_hours": {
        "en": "GPU-hours = the paper's eq. (4) projection (a benchmark run, not a finished training)",
        "zh": "GPU 小时数取论文公式 (4) 的估算（这是一次基准测试，不是完整的训练）"},
    "published.assume.bloom_engine": {"en": "DeepSpeed's pipeline engine modelled as 1F1B (non-interleaved)",
                                      "zh": "DeepSpeed 的流水线引擎按 1F1B（非交错）建模"},
    "published.assume.bloom_batch": {
        "en": "the final global batch 2048 for the whole run (the run ramped the batch up at the start)",
        "zh": "整个训练都按最终的全局批大小 2048 计（训练开始时批大小是逐步增大的）"},
    "published.assume.llama_mb": {
        "en": "micro-batch size 1 sequence, so M = 16 microbatches per step (the paper does not give it)",
        "zh": "微批大小为 1 条序列，所以每步 M = 16 个微批（论文没有给出）"},
    "published.assume.llama_v": {
        "en": "V = 8 chunks per rank, one transformer layer each (126 layers on 16 ranks, minus one on the first "
              "and last; V is not published): the lowest bubble the layer count allows",
        "zh": "每个 rank V = 8 个 chunk，每个 chunk 一层 transformer（126 层分到 16 个 rank，首尾两个 rank 各少一层；"
              "V 未公开）：这是该层数下能达到的最小气泡"},
    "published.assume.llama_hours": {
        "en": "the 16K-GPU, 8K-sequence configuration for all 30.84M GPU-hours (Table 4 also lists 8K GPUs "
              "and a long-context stage)",
        "zh": "全部 3084 万 GPU 小时都按 16384 张 GPU、序列长度 8192 的配置计（表 4 还列出了 8192 张 GPU 的配置和一个长上下文阶段）"},
    "published.assume.ds_dp": {
        "en": "non-expert data parallelism 2048 / 16 = 128 pipelines, so 120 sequences per pipeline per step",
        "zh": "非专家部分的数据并行为 2048 / 16 = 128 条流水线，所以每条流水线每步 120 条序列"},
    "published.assume.ds_mb": {"en": "micro-batch size 1 sequence, so m = 120 microbatches (not published)",
                               "zh": "微批大小为 1 条序列，所以 m = 120 个微批（未公开）"},
    "published.assume.ds_costs": {"en": "F : B : W = 1 : 2 : 1 per chunk, and F&B = F + B (no overlap gain) unless stated",
                                  "zh": "每个 chunk 的 F : B : W = 1 : 2 : 1；除非另有说明，F&B = F + B（重叠没有收益）"},
    "published.assume.ds_batch": {"en": "the final batch 15360 for the whole run (it ramped up from 3072)",
                                  "zh": "整个训练都按最终的批大小 15360 计（训练中从 3072 逐步增大）"},
    "published.assume.ds_hours": {
        "en": "the pre-training configuration for all 2.788M GPU-hours (Table 1: 2,664K pre-training, 119K context "
              "extension, 5K post-training)",
        "zh": "全部 278.8 万 GPU 小时都按预训练的配置计（表 1：预训练 266.4 万，上下文扩展 11.9 万，后训练 0.5 万）"},
})



# ----------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class Source:
    """Where a published number comes from.

    Attributes:
        key: short id used by the tables below.
        title: the document's title.
        authors: authors or organisation.
        venue: conference, arXiv id, or repository.
        year: year of publication.
        url: a stable address.
    """

    key: str
    title: str
    authors: str
    venue: str
    year: int
    url: str

    def cite(self, where: str = "") -> str:
        """``Authors, "Title", venue, year`` plus ``where`` (e.g. ``"Table 9"``)."""
        tail = f", {where}" if where else ""
        return f'{self.authors}, "{self.title}", {self.venue}, {self.year}{tail}'


SOURCES: dict[str, Source] = {
    s.key: s
    for s in (
        Source("zb-paper", "Zero Bubble Pipeline Parallelism", "Qi, Wan, Huang, Lin (Sea AI Lab)",
               "ICLR 2024; arXiv 2401.10241", 2024, "https://arxiv.org/abs/2401.10241"),
        Source("zb-readme", "Zero Bubble Pipeline Parallelism (repository README)", "Sea AI Lab",
               "github.com/sail-sg/zero-bubble-pipeline-parallelism", 2024,
               "https://github.com/sail-sg/zero-bubble-pipeline-parallelism"),
        Source("dualpipe-readme", "DualPipe (repository README)", "DeepSeek-AI (J. Li, C. Deng, W. Liang)",
               "github.com/deepseek-ai/DualPipe", 2025, "https://github.com/deepseek-ai/DualPipe"),
        Source("cut-in-half", "Cut-in-half (blog post credited by the DualPipe README for DualPipeV)", "Sea AI Lab",
               "hackmd.io/@ufotalent/r1lVXsa9Jg", 2025, "https://hackmd.io/@ufotalent/r1lVXsa9Jg"),
        Source("zero", "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
               "Rajbhandari, Rasley, Ruwase, He (Microsoft)", "SC 2020; arXiv 1910.02054", 2019,
               "https://arxiv.org/abs/1910.02054"),
        Source("korthikanti", "Reducing Activation Recomputation in Large Transformer Models",
               "Korthikanti et al. (NVIDIA)", "MLSys 2023; arXiv 2205.05198", 2022, "https://arxiv.org/abs/2205.05198"),
        Source("controllable-memory", "Pipeline Parallelism with Controllable Memory", "Qi, Wan, Amar, Lin (Sea AI Lab)",
               "NeurIPS 2024; arXiv 2405.15362", 2024, "https://arxiv.org/abs/2405.15362"),
        Source("megatron-sc21", "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM",
               "Narayanan et al. (NVIDIA, Stanford, Microsoft)", "SC 2021; arXiv 2104.04473", 2021,
               "https://arxiv.org/abs/2104.04473"),
        Source("bloom-train", "tr11-176B-ml training README and slurm script", "BigScience",
               "github.com/bigscience-workshop/bigscience, train/tr11-176B-ml/", 2022,
               "https://github.com/bigscience-workshop/bigscience/tree/master/train/tr11-176B-ml"),
        Source("bloom-paper", "BLOOM: A 176B-Parameter Open-Access Multilingual Language Model", "BigScience Workshop",
               "arXiv 2211.05100", 2022, "https://arxiv.org/abs/2211.05100"),
        Source("llama3-paper", "The Llama 3 Herd of Models", "Llama Team, AI @ Meta", "arXiv 2407.21783", 2024,
               "https://arxiv.org/abs/2407.21783"),
        Source("llama31-card", "Llama 3.1 model card", "Meta", "github.com/meta-llama/llama-models, MODEL_CARD.md",
               2024, "https://github.com/meta-llama/llama-models/blob/main/models/llama3_1/MODEL_CARD.md"),
        Source("deepseek-v3", "DeepSeek-V3 Technical Report", "DeepSeek-AI", "arXiv 2412.19437", 2024,
               "https://arxiv.org/abs/2412.19437"),
    )
}


# ----------------------------------------------------------------------------- zero-bubble paper


@dataclass(frozen=True)
class ZBProfiled:
    """One row of the zero-bubble paper's Table 9: profiled times in ms.

    ``tb`` is the paper's ``T_B`` (input gradient, bubblekit's ``I``); ``tw`` is ``T_W``.
    """

    model: str
    p: int
    m: int
    tf: float
    tb: float
    tw: float
    tcomm: float


#: Qi et al. 2024 (arXiv 2401.10241v1), Appendix D, Table 9 "Profiled time of T_F, T_B,
#: T_W, and T_comm" (ms), recorded in ZB-2p runs on A100 SXM 80G GPUs.
ZB_PROFILED: tuple[ZBProfiled, ...] = (
    ZBProfiled("1.5B", 8, 24, 18.522, 18.086, 9.337, 0.601),
    ZBProfiled("1.5B", 8, 32, 18.513, 18.086, 9.331, 0.626),
    ZBProfiled("1.5B", 8, 64, 18.546, 18.097, 9.321, 0.762),
    ZBProfiled("6.2B", 8, 24, 29.718, 29.444, 19.927, 0.527),
    ZBProfiled("6.2B", 8, 32, 29.802, 29.428, 19.530, 0.577),
    ZBProfiled("6.2B", 8, 64, 29.935, 29.621, 19.388, 0.535),
    ZBProfiled("14.6B", 16, 48, 11.347, 11.248, 8.132, 0.377),
    ZBProfiled("14.6B", 16, 64, 11.307, 11.254, 8.101, 0.379),
    ZBProfiled("14.6B", 16, 128, 11.325, 11.308, 8.109, 0.378),
    ZBProfiled("28.3B", 32, 96, 10.419, 10.207, 7.715, 0.408),
    ZBProfiled("28.3B", 32, 128, 10.408, 10.204, 7.703, 0.408),
    ZBProfiled("28.3B", 32, 256, 10.402, 10.248, 7.698, 0.460),
)

#: Column order of :data:`ZB_TABLE5`.
ZB_TABLE5_COLUMNS: tuple[str, ...] = ("1F1B", "1F1B-I", "ZB-H1", "ZB-H2", "ZB-1p", "ZB-2p")

#: Qi et al. 2024 (arXiv 2401.10241v1), §5.3, Table 5 "Bubble rates of 1F1B, 1F1B-I,
#: ZB-H1, ZB-H2, ZB-1p, ZB-2p under different settings", keyed by (model, m); the rates
#: are computed by the authors from Table 9's profiled times, as a fraction of the
#: longest per-stage execution time (see :func:`stage_span_bubble_rate`).
ZB_TABLE5: dict[tuple[str, int], tuple[float, float, float, float, float, float]] = {
    ("1.5B", 24): (0.2431, 0.1055, 0.1585, 0.1083, 0.1585, 0.0433),
    ("1.5B", 32): (0.1985, 0.0818, 0.1242, 0.0837, 0.1242, 0.0039),
    ("1.5B", 64): (0.1240, 0.0443, 0.0674, 0.0444, 0.0674, 0.0026),
    ("6.2B", 24): (0.2347, 0.0808, 0.1323, 0.0698, 0.1323, 0.0029),
    ("6.2B", 32): (0.1898, 0.0628, 0.1045, 0.0559, 0.1045, 0.0022),
    ("6.2B", 64): (0.1091, 0.0320, 0.0554, 0.0294, 0.0554, 0.0010),
    ("14.6B", 48): (0.2552, 0.1104, 0.1397, 0.0672, 0.1397, 0.0066),
    ("14.6B", 64): (0.2082, 0.0852, 0.1088, 0.0516, 0.1088, 0.0054),
    ("14.6B", 128): (0.1251, 0.0445, 0.0576, 0.0266, 0.0576, 0.0028),
    ("28.3B", 96): (0.2646, 0.1493, 0.1421, 0.0641, 0.1421, 0.0038),
    ("28.3B", 128): (0.2168, 0.1164, 0.1106, 0.0490, 0.1106, 0.0029),
    ("28.3B", 256): (0.1352, 0.0624, 0.0594, 0.0257, 0.0594, 0.0018),
}

_TABLE5_SCHEDULES = {"1F1B": "1f1b", "ZB-H1": "zb-h1", "ZB-H2": "zb-h2"}


def zb_costs(row: ZBProfiled) -> Costs:
    """The profiled times of one Table 9 row as a :class:`Costs` in ms (``i`` = the paper's T_B)."""
    if not isinstance(row, ZBProfiled):
        raise TypeError(f"row must be a ZBProfiled entry of ZB_PROFILED, got {type(row).__name__}")
    return Costs(f=row.tf, i=row.tb, w=row.tw, comm=row.tcomm, unit="ms",
                 name=f"zero-bubble paper Table 9, {row.model} m={row.m}")


def _timeline(result: Timeline) -> Timeline:
    if not isinstance(result, Timeline):
        raise TypeError(f"result must be a bubblekit Timeline or SimResult, got {type(result).__name__}")
    return result


def stage_span_bubble_rate(result: Timeline) -> float:
    """``result.stage_span_bubble_rate``: the zero-bubble paper's bubble rate (see
    :attr:`bubblekit.Timeline.stage_span_bubble_rate`).

    Used in lessons 07, 09 and 10.
    """
    return _timeline(result).stage_span_bubble_rate


def stage_span_overhead(result: Timeline) -> float:
    """``result.stage_span_overhead`` (see :attr:`bubblekit.Timeline.stage_span_overhead`)."""
    return _timeline(result).stage_span_overhead


def max_rank_bubble_time(result: Timeline) -> float:
    """``result.max_rank_bubble_time`` (see :attr:`bubblekit.Timeline.max_rank_bubble_time`).

    Used in lessons 07 and 10.
    """
    return _timeline(result).max_rank_bubble_time


@dataclass(frozen=True)
class Table5Row:
    """One cell of Table 5 beside bubblekit's values.

    ``computed`` uses the paper's measure (:func:`stage_span_bubble_rate`);
    ``bubble_ratio`` is bubblekit's idle / (p x makespan) for the same simulation.
    """

    model: str
    p: int
    m: int
    schedule: str
    published: float
    computed: float
    bubble_ratio: float

    @property
    def difference(self) -> float:
        """``computed - published`` (the paper rounds to 4 decimals)."""
        return self.computed - self.published


def zb_table5_comparison(columns: tuple[str, ...] = ("1F1B", "ZB-H1", "ZB-H2")) -> list[Table5Row]:
    """Simulate Table 5's schedules under Table 9's profiled costs; one row per cell.

    Args:
        columns: which of ``"1F1B"``, ``"ZB-H1"``, ``"ZB-H2"`` to compute (the other
            columns of Table 5 are searched or interleaved schedules bubblekit does not
            rebuild exactly).
    """
    unknown = [c for c in columns if c not in _TABLE5_SCHEDULES]
    if unknown:
        raise ValueError(f"columns {unknown} cannot be computed; choose from {list(_TABLE5_SCHEDULES)}")
    rows: list[Table5Row] = []
    for prof in ZB_PROFILED:
        costs = zb_costs(prof)
        published = ZB_TABLE5[(prof.model, prof.m)]
        for col in columns:
            res = simulate(schedule(_TABLE5_SCHEDULES[col], prof.p, prof.m), costs)
            rows.append(Table5Row(
                prof.model, prof.p, prof.m, col,
                published[ZB_TABLE5_COLUMNS.index(col)],
                stage_span_bubble_rate(res),
                res.bubble_ratio,
            ))
    return rows


# ----------------------------------------------------------------------------- README closed forms


@dataclass(frozen=True)
class ReadmeRow:
    """One schedule of a README table: the published entries (as text) and bubblekit's numbers.

    Attributes:
        method: the README's name (``"ZB1P"``).
        schedule: the bubblekit schedule simulated for it (or ``None``).
        published: column name -> the README's entry, verbatim.
        computed: column name -> bubblekit's number for the same column.
        note: what differs and why, when it does.
    """

    method: str
    schedule: str | None
    published: dict[str, str]
    computed: dict[str, float]
    note: str = ""


#: sail-sg/zero-bubble-pipeline-parallelism README, "Comparision of Schedules" table, as it reads
#: since 2024-07-03 (commit 8120636a, merged 2024-07-04 with the V schedules; unchanged since):
#: T_F = T_B = T_W assumed, p stages, m microbatches, B = 1F1B's bubble rate. The bubble rate is
#: a fraction of the step (bubble / (ideal + bubble)), not Megatron's bubble / ideal.
#: Columns: method, bubblekit schedule, README entries.
ZB_README: tuple[tuple[str, str | None, dict[str, str]], ...] = (
    ("1F1B", "1f1b", {"bubble rate": "(p-1)/(m+p-1)=B", "activation memory": "1x", "communication volume": "1x"}),
    ("ZB1P", "zb-h1", {"bubble rate": "B/3", "activation memory": "1x", "communication volume": "1x"}),
    ("ZB2P", "zb-h2", {"bubble rate": "0", "activation memory": "2x", "communication volume": "1x"}),
    ("ZBV", "zbv", {"bubble rate": "0", "activation memory": "1x", "communication volume": "2x"}),
    ("V-Half", "v-half", {"bubble rate": "B/2", "activation memory": "1/2x", "communication volume": "2x"}),
    ("V-Min", "v-min", {"bubble rate": "2B/3 + O(n) overhead", "activation memory": "1/3x",
                        "communication volume": "2x"}),
)

#: The README's Bubble Rate row over time (``git log --all -G'Bubble Rate' -- README.md`` on the
#: repository): (from, until, the 1F1B and ZB1P entries). Until 2024-07-03 it gave Megatron's
#: overhead (bubble / ideal time); since then a fraction of the step.
ZB_README_HISTORY: tuple[tuple[str, str, str, str], ...] = (
    ("2023-11-17", "2023-11-20", "p-1/m", "p-1/3m"),
    ("2023-11-20", "2024-07-03", "(p-1)/m", "(p-1)/3m"),
    ("2024-07-03", "today", "(p-1)/(m+p-1)=B", "B/3"),
)


def _readme_rate(entry: str, b: float) -> float | None:
    """The numeric value of a README bubble-rate entry, with ``B`` = 1F1B's rate (O(n) dropped)."""
    values = {"(p-1)/(m+p-1)=B": b, "B/3": b / 3, "0": 0.0, "B/2": b / 2, "2B/3 + O(n) overhead": 2 * b / 3}
    return values.get(entry)


def zb_readme_comparison(p: int = 8, m: int = 32) -> list[ReadmeRow]:
    """bubblekit's numbers for the zero-bubble README table, with F = I = W = 1 slot.

    Bubble rate: :func:`stage_span_bubble_rate` (the authors' measure: each rank from its own
    first to its own last action, a fraction of that span), beside the README's expression
    evaluated with ``B = (p-1)/(m+p-1)`` ("bubble rate (README formula)"). Activation memory: the
    largest per-rank peak over 1F1B's. Communication volume: cross-rank messages per step
    (:attr:`bubblekit.Schedule.hops_per_step`) over 1F1B's; every message carries one
    activation-sized tensor.

    ``ZB1P`` and ``ZB2P`` are the automatically searched schedules of the paper; their
    handcrafted counterparts ZB-H1 and ZB-H2 have the same closed forms at F = I = W and are
    what bubblekit simulates.

    Used in lesson 07.
    """
    p = check_int("p", p)
    m = check_int("m", m)
    costs = Costs(f=1, i=1, w=1)
    base = simulate(schedule("1f1b", p, m), costs)
    base_peak = base.max_peak_activations
    base_hops = base.schedule.hops_per_step
    b = (p - 1) / (m + p - 1)
    rows = []
    for method, name, pub in ZB_README:
        assert name is not None
        res = simulate(schedule(name, p, m), costs)
        formula = _readme_rate(pub["bubble rate"], b)
        computed = {
            "bubble rate": stage_span_bubble_rate(res),
            "bubble rate (README formula)": float("nan") if formula is None else formula,
            "activation memory": res.max_peak_activations / base_peak,
            "communication volume": res.schedule.hops_per_step / base_hops if base_hops else 1.0,
        }
        note = ""
        if method == "ZB1P":
            note = tr("published.note.zb1p")
        elif method == "ZB2P":
            note = tr("published.note.zb2p", peak=2 * p - 1)
        elif method == "ZBV":
            note = tr("published.note.zbv")
        elif method in ("V-Half", "V-Min"):
            peak = "⌊(p+2)/2⌋" if method == "V-Half" else "⌊(p+4)/3⌋"
            note = tr("published.note.v", peak=peak, value=res.max_peak_activations, p=p, memory=pub["activation memory"])
        rows.append(ReadmeRow(method, name, pub, computed, note))
    return rows


#: deepseek-ai/DualPipe README, "Pipeline Bubbles and Memory Usage Comparison (based on the same
#: number of PP stages)", as it reads since 2025-03-05 (commits cfc4361 of 2025-03-04, which added
#: the DualPipeV row and the #Devices column, and f371022): F forward chunk, B full backward chunk,
#: W weight-gradient chunk, F&B two mutually overlapped forward and backward chunks; "PP denotes
#: the number of pp stages (even)". The first table (2025-02-20) had the first three rows only,
#: with 1F1B's bubble mistyped "(PP-1)(F+W)" (fixed 2025-02-27). DeepSeek-V3's report (Dec 2024)
#: has DualPipe, not DualPipeV: DualPipeV was added to the repository on 2025-03-04, crediting
#: Sea AI Lab's "Cut-in-half" write-up. Columns: method, bubblekit schedule, README entries.
DUALPIPE_README: tuple[tuple[str, str | None, dict[str, str]], ...] = (
    ("1F1B", "1f1b", {"bubble": "(PP-1)(F+B)", "parameter": "1x", "activation": "PP", "devices": "PP"}),
    ("ZB1P", "zb-h1", {"bubble": "(PP-1)(F+B-2W)", "parameter": "1x", "activation": "PP", "devices": "PP"}),
    ("DualPipe", "dualpipe", {"bubble": "(PP/2-1)(F&B+B-3W)", "parameter": "2x", "activation": "PP+1",
                              "devices": "PP"}),
    ("DualPipeV", "dualpipev", {"bubble": "(PP/2-1)(F&B+B-3W)", "parameter": "2x", "activation": "PP+1",
                                "devices": "PP/2"}),
)


def dualpipe_bubble_time(pp: int, f: float, b: float, w: float, fb: float | None = None) -> float:
    """DualPipe's closed-form bubble per device, ``(PP/2 - 1)(F&B + B - 3W)`` (the DualPipe README).

    In bubblekit's model (each ``F&B`` pair one unit, no latency) it is exactly the largest idle
    time of a rank over the step, for DualPipe on PP ranks and DualPipeV on PP/2, when the
    input-gradient pass takes as long as the forward (``I = F``, so ``B = F + W``) and ``W <= F``,
    for any ``F&B`` between ``max(F, B)`` and ``F + B`` (``tests/test_dualpipe.py``).

    Args:
        pp: pipeline stages PP (even, >= 2).
        f, b, w: forward, full backward and weight-gradient time of one chunk (time unit).
        fb: time of an overlapped forward+backward pair; default ``f + b`` (no overlap gain).

    Used in lessons 07 and 08.
    """
    pp = check_int("pp", pp)
    if pp % 2:
        raise ValueError(f"pp must be even for DualPipe (two directions), got pp={pp}")
    f = float(check_number("f", f, minimum=0, allow_equal=False))
    b = float(check_number("b", b, minimum=0, allow_equal=False))
    w = float(check_number("w", w, minimum=0))
    fb_ = f + b if fb is None else float(check_number("fb", fb, minimum=0, allow_equal=False))
    return (pp // 2 - 1) * (fb_ + b - 3 * w)


def _chunk_costs(costs: Costs, chunks: int) -> Costs:
    """``costs`` read as one chunk's times, for a schedule whose microbatch passes ``chunks`` chunks per rank."""
    if chunks == 1:
        return costs
    scale = (lambda x: tuple(e * chunks for e in x)) if isinstance(costs.f, tuple) else (lambda x: x * chunks)
    fb = costs.fb * chunks if isinstance(costs.fb, (int, float)) and not isinstance(costs.fb, bool) else costs.fb
    return costs.with_(f=scale(costs.f), b=scale(costs.b), i=scale(costs.i), w=scale(costs.w), fb=fb)


def dualpipe_readme_comparison(pp: int = 4, m: int = 16, costs: Costs | None = None) -> list[ReadmeRow]:
    """bubblekit beside the DualPipe README's table, on its own basis: the same number PP of stages.

    1F1B, ZB1P (ZB-H1) and DualPipe run on PP ranks, DualPipeV on PP/2 ranks (its 2 chunks per
    rank are PP stages in all). ``costs`` are **one chunk's** times (F, I, W, and the pair time
    ``fb`` / ``overlap``; default F = I = W = 1 slot, F&B = F + B); each schedule gets them per chunk.

    Bubble: the largest idle time of a rank over the step (makespan minus its busy time), beside
    the README's expression with the same chunk times ("bubble (README formula, same costs)"); they
    agree exactly for DualPipe and DualPipeV when I = F and W <= F (the README's own cells), and
    not otherwise. Parameter: stages held per device over 1F1B's. Activation: the largest peak in
    chunk activations (the README's unit). Devices: ranks used.

    Used in lessons 07 and 09.
    """
    pp = check_int("pp", pp)
    m = check_int("m", m)
    if pp < 2 or pp % 2:
        raise ValueError(f"pp must be even and >= 2 (DualPipe's PP stages), got pp={pp}")
    if costs is None:
        costs = Costs(f=1, i=1, w=1)
    one_chunk = costs.resolve(1, 1)
    f, i, w = (float(one_chunk.f[0]), float(one_chunk.i[0]), float(one_chunk.w[0]))
    b = i + w
    fb = float(one_chunk.pair_duration(0, 0))
    rows = []
    for method, name, pub in DUALPIPE_README:
        assert name is not None
        ranks = pp // 2 if name == "dualpipev" else pp
        sched = schedule(name, ranks, m)
        res = simulate(sched, _chunk_costs(costs, sched.chunks_per_microbatch))
        if name in ("dualpipe", "dualpipev"):
            formula = dualpipe_bubble_time(pp, f, b, w, fb)
        elif method == "ZB1P":
            formula = (pp - 1) * (f + b - 2 * w)
        else:
            formula = (pp - 1) * (f + b)
        computed = {
            "bubble": float(max(res.idle)),
            "bubble (README formula, same costs)": formula,
            "parameter": max(len(sched.stages_of(r)) for r in range(ranks)) / 1.0,
            "activation": res.max_peak_activations * sched.chunks_per_microbatch,
            "devices": float(ranks),
        }
        note = ""
        if name == "dualpipe":
            note = tr("published.note.dualpipe")
        elif name == "dualpipev":
            note = tr("published.note.dualpipev")
        rows.append(ReadmeRow(method, name, pub, computed, note))
    return rows


# ----------------------------------------------------------------------------- lesson 07x's tables
#
# The comparisons above as :class:`~bubblekit.text.Table` objects, so that lesson 07x shows each
# published table beside bubblekit's numbers with one call (headers in the learner's language;
# column keys stay English for the lesson's checks).

register({
    "published.t.from": {"en": "from", "zh": "起始日期"},
    "published.t.until": {"en": "until", "zh": "截止日期"},
    "published.t.method": {"en": "method", "zh": "方法"},
    "published.t.formula": {"en": "formula", "zh": "README 代入值"},
    "published.t.memory": {"en": "memory", "zh": "README 显存（相对 1F1B）"},
    "published.t.bk_memory": {"en": "bubblekit memory", "zh": "bubblekit 显存（相对 1F1B）"},
    "published.t.messages": {"en": "messages", "zh": "消息数（相对 1F1B）"},
    "published.t.note": {"en": "note", "zh": "说明"},
    "published.t.readme_bubble": {"en": "README bubble", "zh": "README 气泡"},
    "published.t.parameters": {"en": "parameters", "zh": "参数显存"},
    "published.t.activation_chunks": {"en": "activation (chunks)", "zh": "激活峰值（单位：一个 chunk 的激活）"},
    "published.t.devices": {"en": "devices", "zh": "设备数"},
    "published.t.dualpipe_note": {"en": "{costs}; PP = {pp}, m = {m}, chunk times",
                                  "zh": "{costs}；PP = {pp}，m = {m}，均为单个 chunk 的耗时"},
    "published.t.model": {"en": "model", "zh": "模型"},
    "published.t.schedule": {"en": "schedule", "zh": "调度"},
    "published.t.published": {"en": "published", "zh": "论文值"},
    "published.t.table5_note": {
        "en": "bubble_ratio: the whole step (p × makespan); ZB-H2's corners count there and not in the paper's measure",
        "zh": "bubble_ratio（气泡比例）按整步计算（p × 单步耗时）：ZB-H2 首尾两角的空闲计入其中，论文的口径不计入"},
    "published.t.search_p": {"en": "search, cap p", "zh": "搜索，上限 p"},
    "published.t.search_2p": {"en": "search, cap 2p", "zh": "搜索，上限 2p"},
    "published.t.zero_stage": {"en": "ZeRO stage", "zh": "ZeRO 级别"},
    "published.t.today": {"en": "today", "zh": "至今"},
    "published.t.gb_per_device": {"en": "GB per device", "zh": "单卡显存（GB）"},
    "published.t.hidden": {"en": "hidden", "zh": "隐藏维度"},
    "published.t.seq": {"en": "seq", "zh": "序列长度"},
    "published.t.measured_mib": {"en": "measured MiB", "zh": "实测 MiB"},
    "published.t.formula_mib": {"en": "formula MiB", "zh": "公式 MiB"},
    "published.t.difference": {"en": "difference", "zh": "相对误差"},
})


def zb_readme_history_table() -> Table:
    """:data:`ZB_README_HISTORY` as a table: ``from``, ``until``, ``1F1B``, ``ZB1P``. Used in lesson 07x."""
    def until(day: str) -> str:
        return tr("published.t.today") if day == "today" else day

    return Table([{"from": a, "until": until(b), "1F1B": one, "ZB1P": zb} for a, b, one, zb in ZB_README_HISTORY],
                 headers={"from": tr("published.t.from"), "until": tr("published.t.until")})


def zb_readme_table(p: int = 8, m: int = 32) -> Table:
    """:func:`zb_readme_comparison` as a table, one row per README method.

    Columns: ``method``, ``README`` (its bubble-rate entry), ``formula`` (that entry evaluated
    with 1F1B's B), ``bubblekit`` (the stage-span bubble rate simulated at F = I = W = 1),
    ``memory`` (the README's activation memory), ``bubblekit memory`` (peak over 1F1B's) and
    ``messages`` (communication volume over 1F1B's). Used in lesson 07x.
    """
    rows = [{"method": r.method, "README": r.published["bubble rate"], "formula": r.computed["bubble rate (README formula)"],
             "bubblekit": r.computed["bubble rate"], "memory": r.published["activation memory"],
             "bubblekit memory": r.computed["activation memory"], "messages": r.computed["communication volume"]}
            for r in zb_readme_comparison(p, m)]
    return Table(rows, formats={"formula": "percent2", "bubblekit": "percent2", "bubblekit memory": "float2"},
                 headers={"method": tr("published.t.method"), "formula": tr("published.t.formula"),
                          "memory": tr("published.t.memory"), "bubblekit memory": tr("published.t.bk_memory"),
                          "messages": tr("published.t.messages")})


def zb_readme_notes(p: int = 8, m: int = 32) -> Table:
    """The notes of :func:`zb_readme_comparison` (what differs from the README, and why). Used in lesson 07x."""
    return Table([{"method": r.method, "note": r.note} for r in zb_readme_comparison(p, m) if r.note],
                 headers={"method": tr("published.t.method"), "note": tr("published.t.note")})


def dualpipe_readme_table(pp: int = 8, m: int = 32, costs: Costs | None = None) -> Table:
    """:func:`dualpipe_readme_comparison` as a table (``costs``: one chunk's times).

    Columns: ``method``, ``README bubble`` (its expression), ``formula`` (evaluated with the
    same chunk times), ``bubblekit`` (the largest idle time of a rank, simulated),
    ``parameters``, ``activation (chunks)`` (peak) and ``devices``. Used in lesson 07x.
    """
    if costs is None:
        costs = Costs(f=1, i=1, w=1)
    rows = [{"method": r.method, "README bubble": r.published["bubble"],
             "formula": r.computed["bubble (README formula, same costs)"], "bubblekit": r.computed["bubble"],
             "parameters": r.published["parameter"], "activation (chunks)": r.computed["activation"],
             "devices": r.computed["devices"]} for r in dualpipe_readme_comparison(pp, m, costs)]
    return Table(rows, headers={"method": tr("published.t.method"), "README bubble": tr("published.t.readme_bubble"),
                                "formula": tr("published.t.formula"), "parameters": tr("published.t.parameters"),
                                "activation (chunks)": tr("published.t.activation_chunks"),
                                "devices": tr("published.t.devices")},
                 note=tr("published.t.dualpipe_note", costs=_describe_with_pair(costs), pp=pp, m=m))


def _describe_with_pair(costs: Costs) -> str:
    """``costs.describe()``, naming F&B also when it is the default F + B (lesson 07x compares both)."""
    return costs.describe(name_pair=True)


def zb_table5_table() -> Table:
    """:func:`zb_table5_comparison` as a table: ``model``, ``p``, ``m``, ``schedule``, ``published``,
    ``bubblekit`` (the paper's measure) and ``bubble_ratio`` (the whole step). Used in lesson 07x."""
    return Table([{"model": r.model, "p": r.p, "m": r.m, "schedule": r.schedule, "published": r.published,
                   "bubblekit": r.computed, "bubble_ratio": r.bubble_ratio} for r in zb_table5_comparison()],
                 formats={"published": "ratio", "bubblekit": "ratio", "bubble_ratio": "ratio"},
                 headers={"model": tr("published.t.model"), "schedule": tr("published.t.schedule"),
                          "published": tr("published.t.published")},
                 note=tr("published.t.table5_note"))


def zb_search_table(rows: int = 3) -> Table:
    """Table 5's searched columns ZB-1p and ZB-2p beside bubblekit's search (lesson 07x).

    For the first ``rows`` profiled settings (:data:`ZB_PROFILED`): the published ZB-1p and
    ZB-2p and the stage-span bubble rate of ``search_schedule`` under a memory cap of p and 2p
    microbatch activations. Columns: ``model``, ``m``, ``ZB-1p``, ``search, cap p``, ``ZB-2p``,
    ``search, cap 2p``.
    """
    from bubblekit.analysis.search import search_schedule

    rows = check_int("rows", rows, minimum=1)
    out = []
    for prof in ZB_PROFILED[:rows]:
        costs, pub = zb_costs(prof), ZB_TABLE5[(prof.model, prof.m)]
        got = [stage_span_bubble_rate(simulate(search_schedule(prof.p, prof.m, costs, mem_cap=cap,
                                                               objective="stage_span", improve=False, progress=False), costs))
               for cap in (prof.p, 2 * prof.p)]
        out.append({"model": prof.model, "m": prof.m, "ZB-1p": pub[ZB_TABLE5_COLUMNS.index("ZB-1p")],
                    "search, cap p": got[0], "ZB-2p": pub[ZB_TABLE5_COLUMNS.index("ZB-2p")], "search, cap 2p": got[1]})
    return Table(out, formats={k: "ratio" for k in ("ZB-1p", "search, cap p", "ZB-2p", "search, cap 2p")},
                 headers={"model": tr("published.t.model"), "search, cap p": tr("published.t.search_p"),
                          "search, cap 2p": tr("published.t.search_2p")})


def zero_figure1_table(params: float = 7.5e9, dp: int = 64) -> Table:
    """ZeRO's Figure 1: model-state GB per device for ZeRO stages 0-3 (:func:`bubblekit.memory.model_state_bytes`).

    Columns ``ZeRO stage`` and ``gb_per_device`` (10^9 bytes; header "GB per device"). Used in lesson 07x.
    """
    from bubblekit import memory

    rows = [{"ZeRO stage": z, "gb_per_device": sum(memory.model_state_bytes(params, dp=dp, zero=z).values()) / memory.GB}
            for z in range(4)]
    return Table(rows, formats={"gb_per_device": "float2"}, note=SOURCES["zero"].cite("Figure 1"),
                 headers={"ZeRO stage": tr("published.t.zero_stage"), "gb_per_device": tr("published.t.gb_per_device")})


def activation_formula_table() -> Table:
    """Korthikanti et al.'s activation bytes per layer beside the course's H200 measurement (lesson 07x).

    One row per measured configuration (``bubblekit/data``): ``hidden``, ``seq``, ``measured MiB``,
    ``formula MiB`` (:func:`bubblekit.memory.activation_bytes_per_layer`) and ``difference``
    (formula / measured - 1).
    """
    from bubblekit import memory
    from bubblekit.costs import load_h200_layer_costs

    rows = []
    for c in load_h200_layer_costs()["configs"]:
        model = memory.Model(layers=1, hidden=c["hidden"], heads=c["heads"], seq=c["seq"])
        measured, formula = c["layer"]["activation_bytes_per_microbatch"], memory.activation_bytes_per_layer(model)
        rows.append({"hidden": c["hidden"], "seq": c["seq"], "measured MiB": measured / 2**20,
                     "formula MiB": formula / 2**20, "difference": formula / measured - 1})
    return Table(rows, formats={"measured MiB": "float1", "formula MiB": "float1", "difference": "percent2"},
                 headers={"hidden": tr("published.t.hidden"), "seq": tr("published.t.seq"),
                          "measured MiB": tr("published.t.measured_mib"), "formula MiB": tr("published.t.formula_mib"),
                          "difference": tr("published.t.difference")})


# ----------------------------------------------------------------------------- Megatron table 1


@dataclass(frozen=True)
class MegatronRow:
    """One row of Narayanan et al. (SC21) Table 1, "Weak-scaling throughput for GPT models".

    ``batch`` is the global batch in sequences (sequence length 2048); ``tflops`` the
    achieved teraFLOP/s per GPU; ``peak_pct`` the percentage of theoretical peak.
    """

    params_b: float
    heads: int
    hidden: int
    layers: int
    tp: int
    pp: int
    gpus: int
    batch: int
    tflops: int
    peak_pct: int
    aggregate_pflops: float

    @property
    def dp(self) -> int:
        """Data-parallel degree ``gpus / (tp * pp)``."""
        return self.gpus // (self.tp * self.pp)

    def microbatches(self, micro_batch: int = 1) -> int:
        """Microbatches per pipeline per step, ``batch / (dp * micro_batch)`` (micro-batch: an assumption)."""
        micro_batch = check_int("micro_batch", micro_batch)
        per_pipe, rest = divmod(self.batch, self.dp * micro_batch)
        if rest:
            raise ValueError(
                f"batch {self.batch} is not a multiple of dp*micro_batch = {self.dp}*{micro_batch}"
            )
        return per_pipe

    @property
    def max_chunks(self) -> int:
        """Largest interleaving ``v``: layers per rank (one layer per chunk); 1 without a pipeline or when it does not divide."""
        if self.pp == 1:
            return 1
        per_rank, rest = divmod(self.layers, self.pp)
        return per_rank if rest == 0 else 1


#: Narayanan et al., SC21, §5.1 Table 1 (all rows). "we use the interleaved pipeline
#: schedule with the scatter/gather optimization enabled" (§5.1); sequence length 2048,
#: A100 80GB GPUs (peak 312 teraFLOP/s in 16-bit).
MEGATRON_TABLE1: tuple[MegatronRow, ...] = (
    MegatronRow(1.7, 24, 2304, 24, 1, 1, 32, 512, 137, 44, 4.4),
    MegatronRow(3.6, 32, 3072, 30, 2, 1, 64, 512, 138, 44, 8.8),
    MegatronRow(7.5, 32, 4096, 36, 4, 1, 128, 512, 142, 46, 18.2),
    MegatronRow(18.4, 48, 6144, 40, 8, 1, 256, 1024, 135, 43, 34.6),
    MegatronRow(39.1, 64, 8192, 48, 8, 2, 512, 1536, 138, 44, 70.8),
    MegatronRow(76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140, 45, 143.8),
    MegatronRow(145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148, 47, 227.1),
    MegatronRow(310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155, 50, 297.4),
    MegatronRow(529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163, 52, 410.2),
    MegatronRow(1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163, 52, 502.0),
)

#: Narayanan et al. SC21 §5.1: "we assume that 450 billion tokens are needed" for the 1T
#: model, and estimate "end-to-end training time of 84 days" on 3072 GPUs (eq. 4).
MEGATRON_1T_TOKENS = 450e9
MEGATRON_1T_DAYS_PUBLISHED = 84


def megatron_training_days(row: MegatronRow, tokens: float) -> float:
    """Narayanan et al.'s eq. (4): end-to-end time ``8 T P / (n X)`` in days.

    ``T`` tokens, ``P`` parameters, ``n`` GPUs, ``X`` achieved FLOP/s per GPU (Table 1).
    """
    tokens = float(check_number("tokens", tokens, minimum=0, allow_equal=False))
    seconds = 8 * tokens * row.params_b * 1e9 / (row.gpus * row.tflops * 1e12)
    return seconds / 86400.0


# ----------------------------------------------------------------------------- case studies

#: The GPU price the course uses for every case: USD per GPU-hour. It is the DeepSeek-V3
#: report's own rental assumption for an H800 ("$2 per GPU hour", §1); applying it to A100s
#: and H100s is the course's assumption, not a market quote.
DEFAULT_USD_PER_GPU_HOUR = 2.0


@dataclass(frozen=True)
class Case:
    """A published training configuration for lesson 08.

    Attributes:
        name: short label.
        model: the model.
        gpus: GPUs in the run (published).
        pp: pipeline-parallel size (published).
        dp: data-parallel replicas of one pipeline (published or derived from published sizes).
        global_batch: sequences per optimizer step (published).
        seq_len: tokens per sequence (published).
        micro_batch: sequences per microbatch (published, or an assumption: see ``assumptions``).
        schedule: the bubblekit schedule standing for the published one.
        v: chunks per rank for interleaved / V schedules.
        gpu_hours: GPU-hours of the training run (published), or ``None``.
        facts: published statements used, each with its source and place.
        assumptions: every value not taken from a source, in words.
    """

    name: str
    model: str
    gpus: int
    pp: int
    dp: int
    global_batch: int
    seq_len: int
    micro_batch: int
    schedule: str
    v: int
    gpu_hours: float | None
    facts: tuple[str, ...]
    assumptions: tuple[str, ...] = field(default_factory=tuple)


def _megatron_1t() -> Case:
    row = MEGATRON_TABLE1[-1]
    days = megatron_training_days(row, MEGATRON_1T_TOKENS)
    return Case(
        name="Megatron-LM 1T", model="GPT 1008B (Megatron-LM weak-scaling Table 1, last row)",
        gpus=row.gpus, pp=row.pp, dp=row.dp, global_batch=row.batch, seq_len=2048, micro_batch=1,
        schedule="interleaved", v=row.max_chunks, gpu_hours=days * 24 * row.gpus,
        facts=(
            SOURCES["megatron-sc21"].cite("Table 1: 1008.0B params, 128 layers, TP 8, PP 64, 3072 GPUs, batch 3072"),
            SOURCES["megatron-sc21"].cite("§5.1: interleaved schedule; 450B tokens; eq. (4) estimate of 84 days"),
        ),
        assumptions=(
            "micro-batch size 1 (Table 1 does not give it)",
            f"v = {row.max_chunks} chunks per rank (the most that {row.layers} layers on {row.pp} ranks allow; "
            "Table 1 does not give v)",
            "GPU-hours = the paper's eq. (4) projection (a benchmark run, not a finished training)",
            "equal stages, backward = 2 x forward, no communication cost",
        ),
    )


CASES: dict[str, Case] = {
    c.name: c
    for c in (
        _megatron_1t(),
        Case(
            name="BLOOM-176B", model="BLOOM-176B", gpus=384, pp=12, dp=8, global_batch=2048, seq_len=2048,
            micro_batch=2, schedule="1f1b", v=1, gpu_hours=1_082_990,
            facts=(
                SOURCES["bloom-train"].cite("README 'Replica setup': TP=4 PP=12 DP=8 MBS=2, 384 GPUs (48 nodes)"),
                SOURCES["bloom-train"].cite("tr11-176B-ml.slurm: GLOBAL_BATCH_SIZE=2048, SEQ_LEN=2048"),
                SOURCES["bloom-paper"].cite("§3.4.1: 'consumed 1,082,990 compute hours' over about 3.5 months"),
            ),
            assumptions=(
                "DeepSpeed's pipeline engine modelled as 1F1B (non-interleaved)",
                "the final global batch 2048 for the whole run (the run ramped the batch up at the start)",
                "equal stages, backward = 2 x forward, no communication cost",
            ),
        ),
        Case(
            name="Llama 3 405B", model="Llama 3 405B", gpus=16_384, pp=16, dp=128, global_batch=2048, seq_len=8192,
            micro_batch=1, schedule="interleaved", v=8, gpu_hours=30.84e6,
            facts=(
                SOURCES["llama3-paper"].cite("Table 4: 16,384 GPUs, TP 8, CP 1, PP 16, DP 128, seq 8,192, "
                                             "batch size/DP 16, 16M tokens/batch, 400 TFLOPs/GPU, 41% MFU"),
                SOURCES["llama3-paper"].cite("§3.3.2: interleaved schedule with V stages per rank, bubble "
                                             "(PP-1)/(V*M)"),
                SOURCES["llama31-card"].cite("30.84M H100-80GB GPU hours for Llama 3.1 405B"),
            ),
            assumptions=(
                "micro-batch size 1 sequence, so M = 16 microbatches per step (the paper does not give it)",
                "V = 8 chunks per rank, one transformer layer each (126 layers on 16 ranks, minus one on the first "
                "and last; V is not published): the lowest bubble the layer count allows",
                "the 16K-GPU, 8K-sequence configuration for all 30.84M GPU-hours (Table 4 also lists 8K GPUs "
                "and a long-context stage)",
                "equal stages, backward = 2 x forward, no communication cost",
            ),
        ),
        Case(
            name="DeepSeek-V3", model="DeepSeek-V3 (671B MoE, 37B active)", gpus=2048, pp=16, dp=128,
            global_batch=15_360, seq_len=4096, micro_batch=1, schedule="dualpipe", v=2, gpu_hours=2.788e6,
            facts=(
                SOURCES["deepseek-v3"].cite("§3.2: 16-way PP, 64-way EP over 8 nodes, ZeRO-1 DP, 2048 H800 GPUs"),
                SOURCES["deepseek-v3"].cite("§3.2.1 and Table 2: DualPipe, bubble (PP/2-1)(F&B+B-3W)"),
                SOURCES["deepseek-v3"].cite("§4.2: batch size 15360 sequences (after ramp-up), sequence length 4K"),
                SOURCES["deepseek-v3"].cite("Table 1: 2.788M H800 GPU hours, $5.576M at $2 per GPU hour"),
            ),
            assumptions=(
                "non-expert data parallelism 2048 / 16 = 128 pipelines, so 120 sequences per pipeline per step",
                "micro-batch size 1 sequence, so m = 120 microbatches (not published)",
                "F : B : W = 1 : 2 : 1 per chunk, and F&B = F + B (no overlap gain) unless stated",
                "the final batch 15360 for the whole run (it ramped up from 3072)",
                "the pre-training configuration for all 2.788M GPU-hours (Table 1: 2,664K pre-training, 119K context "
                "extension, 5K post-training)",
            ),
        ),
    )
}


def case_microbatches(case: Case) -> int:
    """Microbatches per pipeline per step: ``global_batch / (dp * micro_batch)``."""
    per, rest = divmod(case.global_batch, case.dp * case.micro_batch)
    if rest:
        raise ValueError(f"{case.name}: global batch {case.global_batch} is not a multiple of dp*micro_batch")
    return per


@dataclass(frozen=True)
class CaseEstimate:
    """What a case's configuration implies.

    Attributes:
        case: the :class:`Case`.
        m: microbatches per pipeline per step.
        bubble_ratio: idle / (ranks x makespan), a fraction (the article's b).
        bubble_overhead: idle / busy (Megatron's convention).
        method: how ``bubble_ratio`` was obtained (the simulated schedule, p, m, v).
        idle_gpu_hours: ``bubble_ratio * gpu_hours`` (``None`` without published GPU-hours).
        idle_usd: idle GPU-hours times the price.
        usd_per_gpu_hour: the price used.
    """

    case: Case
    m: int
    bubble_ratio: float
    bubble_overhead: float
    method: str
    idle_gpu_hours: float | None
    idle_usd: float | None
    usd_per_gpu_hour: float


def case_result(
    case: Case | str,
    *,
    schedule_name: str | None = None,
    v: int | None = None,
    micro_batch: int | None = None,
    costs: Costs | None = None,
) -> SimResult:
    """The simulation behind :func:`case_estimate`: the case's schedule on ``p = pp`` ranks.

    Arguments as in :func:`case_estimate`; ``costs`` default ``Costs(f=1, b=2)`` (I = W = 1 slot),
    read as one chunk's times for DualPipe. Returns the :class:`~bubblekit.SimResult` (per-rank
    ``idle``, ``makespan``, both bubble measures). Used in lesson 08 (DualPipe's worst rank).
    """
    case = _case(case)
    mb = case.micro_batch if micro_batch is None else check_int("micro_batch", micro_batch)
    name = case.schedule if schedule_name is None else schedule_name
    if not isinstance(name, str):
        raise TypeError(f"schedule_name must be a schedule name (str), got {type(name).__name__}")
    vv = case.v if v is None else check_int("v", v)
    m = case_microbatches(replace_case(case, micro_batch=mb))
    if costs is None:
        costs = Costs(f=1, b=2)
    if not isinstance(costs, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(costs).__name__}")
    sched = schedule(name, case.pp, m, vv if name in ("interleaved", "looped-bfs") else None)
    return simulate(sched, costs)


def case_estimate(
    case: Case | str,
    *,
    schedule_name: str | None = None,
    v: int | None = None,
    micro_batch: int | None = None,
    costs: Costs | None = None,
    usd_per_gpu_hour: float = DEFAULT_USD_PER_GPU_HOUR,
) -> CaseEstimate:
    """Bubble, idle GPU-hours and their cost for a case (any field can be overridden).

    Args:
        case: a :class:`Case` or a key of :data:`CASES`.
        schedule_name: override the schedule (``"1f1b"``, ``"interleaved"``, ``"zb-h1"``,
            ``"dualpipe"``, ...).
        v: override the chunks per rank (interleaved).
        micro_batch: override the micro-batch size (sequences).
        costs: cost model; default ``Costs(f=1, b=2)`` (I = W = 1).
        usd_per_gpu_hour: price in USD per GPU-hour (> 0).

    The bubble comes from :func:`bubblekit.simulate` of the named schedule with ``p = pp``
    ranks and ``m`` microbatches (:func:`case_result`), ``"dualpipe"`` included: bubblekit's
    DualPipe (two directions, two stages per rank) with ``costs`` as one chunk's times; give
    ``costs=Costs(f=1, b=2, fb="max")`` for a perfectly overlapped F&B pair. With the default
    costs its largest idle per rank is DeepSeek's closed form :func:`dualpipe_bubble_time`
    (lesson 08 checks it).
    """
    if isinstance(case, str):
        if case not in CASES:
            raise ValueError(f"unknown case {case!r}; choose one of {list(CASES)}")
        case = CASES[case]
    if not isinstance(case, Case):
        raise TypeError(f"case must be a Case or a name in CASES, got {type(case).__name__}")
    price = float(check_number("usd_per_gpu_hour", usd_per_gpu_hour, minimum=0, allow_equal=False))
    mb = case.micro_batch if micro_batch is None else check_int("micro_batch", micro_batch)
    name = case.schedule if schedule_name is None else schedule_name
    vv = case.v if v is None else check_int("v", v)
    c = replace_case(case, micro_batch=mb)
    m = case_microbatches(c)
    res = case_result(c, schedule_name=name, v=vv, costs=costs)
    ratio = res.bubble_ratio
    overhead = res.bubble_overhead
    sched = res.schedule
    method = f"simulated {sched.name} p={case.pp} m={m} v={sched.v}"
    idle = None if case.gpu_hours is None else ratio * case.gpu_hours
    usd = None if idle is None else idle * price
    return CaseEstimate(c, m, ratio, overhead, method, idle, usd, price)


def replace_case(case: Case, **changes: object) -> Case:
    """A copy of ``case`` with some fields changed (``replace_case(c, micro_batch=2)``)."""
    from dataclasses import replace

    return replace(case, **changes)  # type: ignore[arg-type]


def closed_form_check(case: Case | str) -> float:
    """The uniform-cost closed form ``(p-1)/(m v + p - 1)`` for a case's own schedule (v = 1 for 1F1B)."""
    if isinstance(case, str):
        case = CASES[case]
    m = case_microbatches(case)
    v = case.v if case.schedule == "interleaved" else 1
    return bubble_ratio(case.pp, m, v)


# ----------------------------------------------------------------------------- case-study tables (lesson 08)
#
# Functions that return the case studies as :class:`~bubblekit.text.Table` objects, so that
# lesson 08 shows each table with one call (HTML in JupyterLab, text elsewhere) and asserts on
# the raw values. Every number is either typed from a source (with its place), an assumption
# stated in words, or computed here from those.

__all__ += [
    "ParallelLayout",
    "CASE_LAYOUTS",
    "case_layouts",
    "case_worksheet",
    "case_studies",
    "case_options",
    "lever_table",
    "megatron_table",
]

#: Short names of the sources, for the "from" column of the tables.
_SHORT_SOURCE: dict[str, str] = {
    "megatron-sc21": "Megatron-LM paper (SC21)",
    "bloom-train": "BLOOM training README",
    "bloom-paper": "BLOOM paper",
    "llama3-paper": "Llama 3 paper",
    "llama31-card": "Llama 3.1 model card",
    "deepseek-v3": "DeepSeek-V3 report",
}


register({
    "published.src.megatron-sc21": {"en": "Megatron-LM paper (SC21)", "zh": "Megatron-LM 论文（SC21）"},
    "published.src.bloom-train": {"en": "BLOOM training README", "zh": "BLOOM 训练 README"},
    "published.src.bloom-paper": {"en": "BLOOM paper", "zh": "BLOOM 论文"},
    "published.src.llama3-paper": {"en": "Llama 3 paper", "zh": "Llama 3 论文"},
    "published.src.llama31-card": {"en": "Llama 3.1 model card", "zh": "Llama 3.1 模型卡"},
    "published.src.deepseek-v3": {"en": "DeepSeek-V3 report", "zh": "DeepSeek-V3 技术报告"},
    "published.where.table": {"en": "Table {n}", "zh": "表 {n}"},
    "published.where.eq4": {"en": "eq. (4) projection for 450B tokens", "zh": "公式 (4)：按 4500 亿 token 的估算"},
    "published.where.slurm": {"en": "slurm script", "zh": "slurm 脚本"},
    "published.where.per_dp": {"en": "Table 4 (16 per DP group)", "zh": "表 4（每个 DP 组 16 条序列）"},
    "published.where.gpu_hours": {"en": "training GPU hours", "zh": "训练 GPU 小时数"},
    "published.method.simulated": {"en": "simulated {name} p={p} m={m} v={v}", "zh": "模拟 {name}，p={p}，m={m}，v={v}"},
    "published.model.Megatron-LM 1T": {"en": "GPT 1008B (Megatron-LM weak-scaling Table 1, last row)",
                                       "zh": "GPT 1008B（Megatron-LM 弱扩展实验表 1 的最后一行）"},
    "published.model.DeepSeek-V3": {"en": "DeepSeek-V3 (671B MoE, 37B active)", "zh": "DeepSeek-V3（671B MoE，激活 37B）"},
})
_WHERE_KEYS = {"eq. (4) projection for 450B tokens": "published.where.eq4", "slurm script": "published.where.slurm",
               "Table 4 (16 per DP group)": "published.where.per_dp", "training GPU hours": "published.where.gpu_hours"}


def _where_words(where: str) -> str:
    """A source's place (``"Table 4"``, ``"slurm script"``) in the current language; section marks
    (``"§3.2"``) and quoted README headings (``"'Replica setup'"``) read the same in both."""
    if where in _WHERE_KEYS:
        return tr(_WHERE_KEYS[where])
    table = re.fullmatch(r"Table (\d+)", where)
    if table:
        return tr("published.where.table", n=table.group(1))
    heading = re.fullmatch(r"'([^']+)'(?: \((\w+)\))?", where)
    if heading and get_language() == "zh":  # a README heading: “Replica setup”一节（MBS）
        return f"“{heading.group(1)}”一节" + (f"（{heading.group(2)}）" if heading.group(2) else "")
    return where


def _from(key: str, where: str) -> str:
    """``"Megatron-LM paper (SC21), Table 1"`` (Chinese: ``"Megatron-LM 论文（SC21），表 1"``); lesson 08's tables."""
    source = tr(f"published.src.{key}") if key in _SHORT_SOURCE else key
    return source + ("，" if get_language() == "zh" else ", ") + _where_words(where)


def _method_words(method: str) -> str:
    """:attr:`CaseEstimate.method` as the learner reads it: ``"simulated 1f1b p=12 m=128 v=1"`` (Chinese:
    ``"模拟 1F1B，p=12，m=128，v=1"``); a method written otherwise is shown as it is."""
    parts = re.fullmatch(r"simulated (\S+) p=(\d+) m=(\d+) v=(\d+)", method)
    if not parts or get_language() == "en":
        return method
    from bubblekit.schedules import display_name

    name, p, m, v = parts.groups()
    return tr("published.method.simulated", name=display_name(name), p=p, m=m, v=v).replace("模拟 交错", "模拟交错")


def _case_title(case: Case) -> str:
    """``"Llama 3 405B"``, or ``"Megatron-LM 1T: GPT 1008B (...)"`` where the model's words do not repeat the name."""
    words = _model_words(case)
    squash = lambda text: re.sub(r"[\s\-]", "", text).lower()  # noqa: E731
    if squash(words).startswith(squash(case.name)):
        return words
    return case.name + ("：" if get_language() == "zh" else ": ") + words


def _model_words(case: Case) -> str:
    key = f"published.model.{case.name}"
    return tr(key) if key in all_messages() and case.model == translate(key, "en") else case.model


@dataclass(frozen=True)
class ParallelLayout:
    """How a case's GPUs are divided among the kinds of parallelism (lesson 08).

    Attributes:
        tp: tensor parallelism (TP): each layer's matrices split over ``tp`` GPUs.
        cp: context parallelism (CP): each sequence's tokens split over ``cp`` GPUs.
        ep: expert parallelism (EP): a mixture-of-experts layer's experts spread over ``ep``
            GPUs. It is carved out of the data-parallel GPUs (DeepSeek-V3), so it does not
            multiply the GPU count; 1 for dense models.
        where: the source of these degrees, as ``(source key, place)``.

    Pipeline (PP) and data (DP) parallelism are the :class:`Case`'s ``pp`` and ``dp``; the
    GPU count is ``tp * cp * pp * dp``.
    """

    tp: int
    cp: int
    ep: int
    where: tuple[str, str]


#: TP, CP and EP degrees of the four cases (PP and DP are in :data:`CASES`).
CASE_LAYOUTS: dict[str, ParallelLayout] = {
    # Table 1: t = 8, p = 64 on 3072 GPUs; context and expert parallelism do not appear (dense GPT, 2021).
    "Megatron-LM 1T": ParallelLayout(8, 1, 1, ("megatron-sc21", "Table 1")),
    # README "Replica setup": TP=4 PP=12 DP=8 (dense model).
    "BLOOM-176B": ParallelLayout(4, 1, 1, ("bloom-train", "'Replica setup'")),
    # Table 4: TP 8, CP 1, PP 16, DP 128 for the 16K-GPU, 8K-sequence stage (dense model).
    "Llama 3 405B": ParallelLayout(8, 1, 1, ("llama3-paper", "Table 4")),
    # §3.2: 16-way PP, 64-way EP, ZeRO-1 DP; §3.2.2: trained "without using costly Tensor Parallelism".
    "DeepSeek-V3": ParallelLayout(1, 1, 64, ("deepseek-v3", "§3.2")),
}

#: Where each case's inputs come from: field -> ``(source key, place)``; fields not listed are
#: assumptions (stated in the case's ``assumptions``).
_CASE_INPUTS: dict[str, dict[str, tuple[str, str]]] = {
    "Megatron-LM 1T": {"gpus": ("megatron-sc21", "Table 1"), "pp": ("megatron-sc21", "Table 1"),
                       "global_batch": ("megatron-sc21", "Table 1"), "schedule": ("megatron-sc21", "§5.1"),
                       "gpu_hours": ("megatron-sc21", "eq. (4) projection for 450B tokens")},
    "BLOOM-176B": {"gpus": ("bloom-train", "'Replica setup'"), "pp": ("bloom-train", "'Replica setup'"),
                   "dp": ("bloom-train", "'Replica setup'"), "global_batch": ("bloom-train", "slurm script"),
                   "micro_batch": ("bloom-train", "'Replica setup' (MBS)"), "gpu_hours": ("bloom-paper", "§3.4.1")},
    "Llama 3 405B": {"gpus": ("llama3-paper", "Table 4"), "pp": ("llama3-paper", "Table 4"),
                     "dp": ("llama3-paper", "Table 4"), "global_batch": ("llama3-paper", "Table 4 (16 per DP group)"),
                     "schedule": ("llama3-paper", "§3.3.2"), "gpu_hours": ("llama31-card", "training GPU hours")},
    "DeepSeek-V3": {"gpus": ("deepseek-v3", "§3.2"), "pp": ("deepseek-v3", "§3.2"),
                    "global_batch": ("deepseek-v3", "§4.2"), "schedule": ("deepseek-v3", "§3.2.1"),
                    "gpu_hours": ("deepseek-v3", "Table 1")},
}

_USD = "${:,.0f}".format
_WHOLE = "{:,.0f}".format  # rounds (the "int" format of bubblekit.text truncates)


def _case(case: Case | str) -> Case:
    if isinstance(case, str):
        if case not in CASES:
            raise ValueError(f"unknown case {case!r}; choose one of {list(CASES)}")
        return CASES[case]
    if not isinstance(case, Case):
        raise TypeError(f"case must be a Case or a name in CASES, got {type(case).__name__}")
    return case


def _schedule_label(est: CaseEstimate) -> str:
    """The schedule an estimate used, for display: read from ``est.method``, which
    :func:`case_estimate` writes as ``"simulated NAME p=.. m=.. v=V"``."""
    from bubblekit.schedules import spec

    name, v = est.method.split()[1], int(est.method.rsplit("v=", 1)[1])
    label = spec(name).display_name
    comma = "，" if get_language() == "zh" else ", "
    return f"{label}{comma}v = {v}" if spec(name).chunks == "many" and name != "dualpipe" else label


def case_layouts() -> Table:
    """The four cases' parallel layouts: GPUs, TP, CP, PP, DP, EP and the chunks per rank.

    Columns: ``case``, ``GPUs``, ``TP``, ``CP``, ``PP``, ``DP``, ``EP``, ``v`` (chunks per
    rank: VPP for interleaving, 2 for DualPipe's two directions), ``TP x CP x PP x DP``
    (equals ``GPUs`` for every published layout) and ``from`` (the source of the degrees).

    Used in lesson 08.
    """
    rows = []
    for name, c in CASES.items():
        lay = CASE_LAYOUTS[name]
        rows.append({"case": name, "GPUs": c.gpus, "TP": lay.tp, "CP": lay.cp, "PP": c.pp, "DP": c.dp,
                     "EP": lay.ep, "v": c.v, "product": lay.tp * lay.cp * c.pp * c.dp, "from": _from(*lay.where)})
    return Table(
        rows, formats={"GPUs": _WHOLE, "product": _WHOLE},
        headers={"case": tr("published.col.case"), "GPUs": tr("published.col.gpus"), "product": "TP × CP × PP × DP",
                 "v": tr("published.col.v_chunks"), "from": tr("published.col.from")},
        title=tr("published.layouts.title"),
        note=tr("published.layouts.note"),
    )


def case_worksheet(case: Case | str | CaseEstimate, **overrides: object) -> Table:
    """One case as a worksheet: each input with where it comes from, then what it implies.

    Args:
        case: a :class:`Case`, a key of :data:`CASES`, or a finished :class:`CaseEstimate`.
        overrides: passed to :func:`case_estimate` (``schedule_name``, ``v``, ``micro_batch``,
            ``costs``, ``usd_per_gpu_hour``) when ``case`` is not already an estimate.

    Rows: GPUs, PP (= p, the ranks of one pipeline), DP, global batch GBS, micro-batch b,
    m = GBS / (DP b), the schedule, ``bubble_ratio`` (idle / (p x makespan), the fraction of
    the step), ``bubble_overhead`` (idle / busy, Megatron's (p-1)/m), the run's GPU-hours,
    the idle GPU-hours (``bubble_ratio`` x GPU-hours), the price and the idle cost in USD.
    Columns: ``quantity``, ``value`` (as text), ``from`` (a source and its place, ``assumed``
    with the case's assumption, or ``computed`` with how). The raw numbers are the
    estimate's fields (:func:`case_estimate`).

    Used in lesson 08.
    """
    est = case if isinstance(case, CaseEstimate) else case_estimate(_case(case), **overrides)  # type: ignore[arg-type]
    c = est.case
    src = _CASE_INPUTS.get(c.name, {})

    def where(field_name: str) -> str:
        return _from(*src[field_name]) if field_name in src else tr("published.ws.assumed")

    hours = "—" if c.gpu_hours is None else f"{c.gpu_hours:,.0f}"
    idle = "—" if est.idle_gpu_hours is None else f"{est.idle_gpu_hours:,.0f}"
    usd = "—" if est.idle_usd is None else _USD(est.idle_usd)
    rows = [
        (tr("published.ws.gpus"), f"{c.gpus:,}", where("gpus")),
        (tr("published.ws.pp"), str(c.pp), where("pp")),
        (tr("published.ws.dp"), str(c.dp), where("dp") if "dp" in src else tr("published.ws.dp_from")),
        (tr("published.ws.batch"), f"{c.global_batch:,}", where("global_batch")),
        (tr("published.ws.micro"), str(c.micro_batch), where("micro_batch")),
        (tr("published.ws.m"), str(est.m), tr("published.ws.computed")),
        (tr("published.ws.schedule"), _schedule_label(est), where("schedule")),
        (tr("published.ws.ratio"), f"{est.bubble_ratio:.2%}", tr("published.ws.ratio_from", method=_method_words(est.method))),
        (tr("published.ws.overhead"), f"{est.bubble_overhead:.2%}", tr("published.ws.overhead_from")),
        (tr("published.ws.hours"), hours, where("gpu_hours")),
        (tr("published.ws.idle"), idle, tr("published.ws.computed")),
        (tr("published.ws.price"), f"{est.usd_per_gpu_hour:g}", tr("published.ws.price_from")),
        (tr("published.ws.cost"), usd, tr("published.ws.cost_from")),
    ]
    shown = [_assumption(a) for a in c.assumptions if not a.startswith("equal stages")]
    return Table(
        rows, ["quantity", "value", "from"],
        headers={"quantity": tr("published.col.quantity"), "value": tr("published.col.value"),
                 "from": tr("published.col.from")},
        title=_case_title(c),
        note=tr("published.ws.note", assumptions=("；" if get_language() == "zh" else "; ").join(shown)),
    )


def _assumption(text: str) -> str:
    """A case's assumption in the current language (one the catalogue does not know stays as written)."""
    from bubblekit.i18n import translate

    for key in _ASSUMPTION_KEYS:
        fields = _ASSUMPTION_FIELDS.get(key, {})
        if translate(key, "en", **fields) == text:
            return tr(key, **fields)
    return text


#: The catalogue keys of the built-in cases' assumptions, and the fields of the computed one.
_ASSUMPTION_KEYS = ("published.assume.mb1", "published.assume.megatron_v", "published.assume.megatron_hours",
                    "published.assume.bloom_engine", "published.assume.bloom_batch", "published.assume.llama_mb",
                    "published.assume.llama_v", "published.assume.llama_hours", "published.assume.ds_dp",
                    "published.assume.ds_mb", "published.assume.ds_costs", "published.assume.ds_batch",
                    "published.assume.ds_hours")
_ASSUMPTION_FIELDS: dict[str, dict[str, object]] = {
    "published.assume.megatron_v": {"v": MEGATRON_TABLE1[-1].max_chunks, "layers": MEGATRON_TABLE1[-1].layers,
                                    "pp": MEGATRON_TABLE1[-1].pp},
}


def case_studies(usd_per_gpu_hour: float = DEFAULT_USD_PER_GPU_HOUR) -> Table:
    """The four cases side by side: bubble (both measures), idle GPU-hours and their cost.

    Columns: ``case``, ``GPUs``, ``PP``, ``m``, ``schedule``, ``bubble_ratio``,
    ``bubble_overhead``, ``GPU-hours``, ``idle GPU-hours`` and ``idle USD`` (at
    ``usd_per_gpu_hour``), each from :func:`case_estimate` with the case's own assumptions.

    Used in lesson 08.
    """
    rows = []
    for name in CASES:
        est = case_estimate(name, usd_per_gpu_hour=usd_per_gpu_hour)
        c = est.case
        rows.append({"case": name, "GPUs": c.gpus, "PP": c.pp, "m": est.m, "schedule": _schedule_label(est),
                     "bubble_ratio": est.bubble_ratio, "bubble_overhead": est.bubble_overhead,
                     "GPU-hours": c.gpu_hours, "idle GPU-hours": est.idle_gpu_hours, "idle USD": est.idle_usd})
    return Table(
        rows,
        formats={"GPUs": _WHOLE, "bubble_ratio": "percent", "bubble_overhead": "percent", "GPU-hours": _WHOLE,
                 "idle GPU-hours": _WHOLE, "idle USD": _USD},
        headers={"case": tr("published.col.case"), "GPUs": tr("published.col.gpus"), "schedule": tr("published.col.schedule"),
                 "GPU-hours": tr("published.col.gpu_hours"), "idle GPU-hours": tr("published.col.idle_hours"),
                 "idle USD": tr("published.col.idle_usd")},
        title=tr("published.studies.title", usd=usd_per_gpu_hour),
        note=tr("published.studies.note"),
    )


_ESTIMATE_KEYS = ("schedule_name", "v", "micro_batch", "costs", "usd_per_gpu_hour")


def _refusal_note(err: ValueError) -> str:
    """The ``note`` of a refused option: PyTorch's interleaving rule named, else the reason's first clause."""
    text = str(err)
    rule = _message_pattern("schedules.refuse.interleaved").search(text)   # raised in the current language
    if rule:
        return tr("published.options.refused_rounds", m=rule["m"], p=rule["p"], below=rule["below"], above=rule["above"])
    return tr("published.options.refused", reason=re.split("[:：]", text)[0])


def _message_pattern(key: str) -> re.Pattern[str]:
    """A regex that reads the (whole-number) fields back out of message ``key`` in the current language."""
    texts = all_messages()[key]
    template = texts.get(get_language(), texts["en"])
    pieces = re.split(r"\{(\w+)[^{}]*\}", template)
    pattern, seen = re.escape(pieces[0]), set()
    for name, literal in zip(pieces[1::2], pieces[2::2]):
        pattern += f"(?P={name})" if name in seen else rf"(?P<{name}>\d+)"
        seen.add(name)
        pattern += re.escape(literal)
    return re.compile(pattern)


def case_options(options: list[tuple[str, str, dict[str, object]]]) -> Table:
    """What-if estimates: each option is ``(case name, label, changes)``.

    ``changes`` holds :func:`case_estimate` arguments (``schedule_name``, ``v``,
    ``micro_batch``, ``costs``, ``usd_per_gpu_hour``) and/or fields of the :class:`Case`
    itself (``global_batch=6144``: applied with :func:`replace_case`). An option that a
    schedule's rule refuses (interleaving with an ``m`` it cannot run, say) gets a row with
    empty numbers and the reason in ``note``.

    Columns: ``case``, ``option``, ``m``, ``schedule``, ``bubble_ratio``, ``bubble_overhead``,
    ``idle GPU-hours``, and ``note`` when an option was refused.

    Used in lesson 08.
    """
    if not isinstance(options, (list, tuple)):
        raise TypeError(f"options must be a list of (case, label, changes) tuples, got {type(options).__name__}")
    rows = []
    for i, item in enumerate(options):
        if not (isinstance(item, tuple) and len(item) == 3 and isinstance(item[2], dict)):
            raise ValueError(f"options[{i}] must be (case name, label, dict of changes), got {item!r}")
        name, label, changes = item
        base = _case(name)
        est_kw = {k: v for k, v in changes.items() if k in _ESTIMATE_KEYS}
        case_kw = {k: v for k, v in changes.items() if k not in _ESTIMATE_KEYS}
        unknown = [k for k in case_kw if k not in Case.__dataclass_fields__]
        if unknown:
            raise ValueError(f"options[{i}] changes {unknown}: neither case_estimate arguments {list(_ESTIMATE_KEYS)} "
                             f"nor Case fields")
        row: dict[str, object] = {"case": base.name, "option": label}
        try:
            est = case_estimate(replace_case(base, **case_kw) if case_kw else base, **est_kw)  # type: ignore[arg-type]
        except ValueError as err:
            row["note"] = _refusal_note(err)
            rows.append(row)
            continue
        row.update({"m": est.m, "schedule": _schedule_label(est), "bubble_ratio": est.bubble_ratio,
                    "bubble_overhead": est.bubble_overhead, "idle GPU-hours": est.idle_gpu_hours, "note": ""})
        rows.append(row)
    columns = ["case", "option", "m", "schedule", "bubble_ratio", "bubble_overhead", "idle GPU-hours"]
    if any(row["note"] for row in rows):
        columns.append("note")
    else:
        for row in rows:
            del row["note"]
    return Table(
        rows, columns,
        formats={"bubble_ratio": "percent", "bubble_overhead": "percent", "idle GPU-hours": _WHOLE},
        headers={"case": tr("published.col.case"), "option": tr("published.col.option"),
                 "schedule": tr("published.col.schedule"), "idle GPU-hours": tr("published.col.idle_hours"),
                 "note": tr("published.col.note")},
        note=tr("published.options.note"),
    )


#: Lesson 08's what-if levers: (case, catalogue key of the label, changes for :func:`case_options`).
_LEVERS: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("Megatron-LM 1T", "published.lever.as_run_v2", {}),
    ("Megatron-LM 1T", "published.lever.double_batch", {"global_batch": 2 * MEGATRON_TABLE1[-1].batch}),
    ("Megatron-LM 1T", "published.lever.zb_not_interleaving", {"schedule_name": "zb-h1"}),
    ("BLOOM-176B", "published.lever.as_run", {}),
    ("BLOOM-176B", "published.lever.mb1", {"micro_batch": 1}),
    ("BLOOM-176B", "published.lever.interleaved_v2", {"schedule_name": "interleaved", "v": 2}),
    ("BLOOM-176B", "published.lever.zb_same_memory", {"schedule_name": "zb-h1"}),
    ("Llama 3 405B", "published.lever.as_assumed_v8", {}),
    ("Llama 3 405B", "published.lever.zb_v1", {"schedule_name": "zb-h1"}),
)

register({
    "published.lever.as_run_v2": {"en": "as run (v = 2 assumed)", "zh": "按实际配置（假设 v = 2）"},
    "published.lever.double_batch": {"en": "twice the global batch", "zh": "全局批大小加倍"},
    "published.lever.zb_not_interleaving": {"en": "ZB-H1 instead of interleaving", "zh": "用 ZB-H1 代替交错"},
    "published.lever.as_run": {"en": "as run", "zh": "按实际配置"},
    "published.lever.mb1": {"en": "micro-batch 1", "zh": "微批大小 1"},
    "published.lever.interleaved_v2": {"en": "interleaved, v = 2", "zh": "交错式，v = 2"},
    "published.lever.zb_same_memory": {"en": "ZB-H1, same memory", "zh": "ZB-H1，显存不变"},
    "published.lever.as_assumed_v8": {"en": "as assumed (V = 8)", "zh": "按假设配置（V = 8）"},
    "published.lever.zb_v1": {"en": "ZB-H1, V = 1", "zh": "改用 ZB-H1，V = 1"},
})


def lever_table() -> Table:
    """Lesson 08's deep dive "what the levers of lesson 05 would change": :func:`case_options` of nine options.

    Rows, in order: Megatron-LM 1T as run (v = 2), with twice the global batch, with ZB-H1
    instead of interleaving; BLOOM-176B as run, with micro-batch 1, interleaved v = 2 (refused:
    m = 128 is not a multiple of 12), ZB-H1; Llama 3 405B as assumed (V = 8), ZB-H1 with V = 1.
    Labels in the current language. Used in lesson 08.
    """
    return case_options([(case, tr(key), dict(changes)) for case, key, changes in _LEVERS])


def megatron_table(micro_batch: int = 1) -> Table:
    """Narayanan et al. (SC21) Table 1 with the bubble each row implies.

    For every row: the published sizes, ``m`` (microbatches per pipeline at ``micro_batch``
    sequences, an assumption: the paper does not give it), ``v max`` (one layer per chunk,
    the most interleaving the layer count allows), the simulated ``bubble_ratio`` of plain
    1F1B and of interleaved 1F1B at ``v max`` (equal stages, B = 2F, no communication), and
    the published teraFLOP/s per GPU. Rows without a pipeline (PP = 1) have no bubble (0).

    Used in lesson 08.
    """
    mb = check_int("micro_batch", micro_batch, minimum=1)
    costs = Costs(f=1, b=2)
    rows = []
    for r in MEGATRON_TABLE1:
        m = r.microbatches(mb)
        plain = inter = 0.0
        if r.pp > 1:
            plain = simulate(schedule("1f1b", r.pp, m), costs).bubble_ratio
            inter = simulate(schedule("interleaved", r.pp, m, r.max_chunks), costs).bubble_ratio \
                if r.max_chunks > 1 else plain
        rows.append({"params (B)": r.params_b, "layers": r.layers, "TP": r.tp, "PP": r.pp, "GPUs": r.gpus,
                     "batch": r.batch, "DP": r.dp, "m": m, "v max": r.max_chunks, "1F1B": plain,
                     "interleaved, v max": inter, "TFLOP/s per GPU": r.tflops})
    return Table(
        rows, formats={"GPUs": _WHOLE, "1F1B": "percent", "interleaved, v max": "percent"},
        headers={"params (B)": tr("published.megatron.params"), "layers": tr("published.megatron.layers"),
                 "GPUs": tr("published.col.gpus"), "batch": tr("published.megatron.batch"),
                 "v max": tr("published.megatron.v_max"), "interleaved, v max": tr("published.megatron.inter"),
                 "TFLOP/s per GPU": tr("published.megatron.tflops")},
        title=tr("published.megatron.where", source=SOURCES["megatron-sc21"].cite() if get_language() == "en"
                 else tr("published.megatron.source")),
        note=tr("published.megatron.note", mb=mb),
    )
