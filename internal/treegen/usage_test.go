package treegen

// weeklyPriorityUsage is the usage timeline of the weekly-priority scenario's
// failed priority pair (docs/formats.md §4.4), with every series the chart
// draws (docs/render.md §3.9): L fills to 8210 MiB, H bursts from 16 s and
// posts a 3900 MiB shortfall that L's watermark follows, and L keeps 7340 MiB.
// Written as the file's bytes so the numbers read as the chart shows them.
const weeklyPriorityUsage = `[
{"t":1764331380,"phase":"l_calibrate + h_calibrate"},
{"t":1764331380.5,"gpu":1600,"gpu_free":14784,"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0},"watermark":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331382,"phase":"l_fill"},
{"t":1764331384,"gpu":3100,"gpu_free":13284,"priority-vllm-qwen05b-kv_c1":1500,"priority-vllm-qwen35_4b-kv_c1":0,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0},"watermark":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331386,"gpu":4600,"gpu_free":11784,"priority-vllm-qwen05b-kv_c1":3000,"priority-vllm-qwen35_4b-kv_c1":0,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0},"watermark":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331388,"gpu":6100,"gpu_free":10284,"priority-vllm-qwen05b-kv_c1":4500,"priority-vllm-qwen35_4b-kv_c1":0,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0},"watermark":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331390,"gpu":7600,"gpu_free":8784,"priority-vllm-qwen05b-kv_c1":6000,"priority-vllm-qwen35_4b-kv_c1":0,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0},"watermark":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331392,"gpu":9100,"gpu_free":7284,"priority-vllm-qwen05b-kv_c1":7500,"priority-vllm-qwen35_4b-kv_c1":0,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0},"watermark":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331394,"gpu":9810,"gpu_free":6574,"priority-vllm-qwen05b-kv_c1":8210,"priority-vllm-qwen35_4b-kv_c1":0,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0},"watermark":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331396,"phase":"h_burst"},
{"t":1764331398,"gpu":11010,"gpu_free":5374,"priority-vllm-qwen05b-kv_c1":8210,"priority-vllm-qwen35_4b-kv_c1":1200,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0},"watermark":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331400,"gpu":12810,"gpu_free":3574,"priority-vllm-qwen05b-kv_c1":8210,"priority-vllm-qwen35_4b-kv_c1":3000,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":2100},"watermark":{"priority-vllm-qwen05b-kv_c1":2100,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331402,"gpu":13910,"gpu_free":2474,"priority-vllm-qwen05b-kv_c1":7900,"priority-vllm-qwen35_4b-kv_c1":4410,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":3900},"watermark":{"priority-vllm-qwen05b-kv_c1":3900,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331404,"gpu":13350,"gpu_free":3034,"priority-vllm-qwen05b-kv_c1":7340,"priority-vllm-qwen35_4b-kv_c1":4410,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":3900},"watermark":{"priority-vllm-qwen05b-kv_c1":3900,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331406,"gpu":13350,"gpu_free":3034,"priority-vllm-qwen05b-kv_c1":7340,"priority-vllm-qwen35_4b-kv_c1":4410,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":3700},"watermark":{"priority-vllm-qwen05b-kv_c1":3700,"priority-vllm-qwen35_4b-kv_c1":0}},
{"t":1764331408,"gpu":13350,"gpu_free":3034,"priority-vllm-qwen05b-kv_c1":7340,"priority-vllm-qwen35_4b-kv_c1":4410,"shortfall":{"priority-vllm-qwen05b-kv_c1":0,"priority-vllm-qwen35_4b-kv_c1":3700},"watermark":{"priority-vllm-qwen05b-kv_c1":3700,"priority-vllm-qwen35_4b-kv_c1":0}}
]
`
