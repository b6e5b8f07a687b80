-- SPDX-License-Identifier: Apache-2.0
-- std.gpu.context: the graphics contexts of the GPU render stage events, with the process and graphics API of each.

-- A row per graphics context the trace names (InternedGraphicsContext of the GpuRenderStageEvent packets). We do not import those yet, so it is empty on every trace.
CREATE PERFETTO VIEW gpu_context(
  -- Row id.
  id ID,
  -- The context's handle as the driver gave it (a GL context, a VkDevice, a CUDA context, ...).
  context_id LONG,
  -- The process that owns the context.
  pid LONG,
  -- Its graphics API: OPEN_GL, VULKAN, OPEN_CL, CUDA, HIP or UNDEFINED.
  api STRING
)
AS
SELECT id, context_id, pid, api
FROM __intrinsic_gpu_context;
