/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heap_profile.h - report a custom allocator (a pool, an arena, a tensor
 * cache) to heapprofd, with Perfetto's client API names, so its blocks show
 * up in a heap profile beside malloc's under their own heap name. Link with
 * -lheapprofd_client (static) or run under libheapprofd_glibc_preload.so.
 *
 *   static uint32_t g_heap;
 *   g_heap = AHeapProfile_registerHeap(AHeapInfo_create("myapp.arena"));
 *   void *p = arena_alloc(n);
 *   AHeapProfile_reportAllocation(g_heap, (uint64_t)(uintptr_t)p, n);
 *   ...
 *   AHeapProfile_reportFree(g_heap, (uint64_t)(uintptr_t)p);
 *
 * A session profiles the heap when its HeapprofdConfig names it in heaps
 * (or sets all_heaps). Without heapprofd or a session every report is one
 * load and a return. Callbacks run on the thread that noticed the session
 * (inside an allocation or a report): they must not block. C99, C++.
 */
#ifndef PERFETTO_C_HEAP_PROFILE_H
#define PERFETTO_C_HEAP_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HEAPPROFD_HEAP_NAME_SZ 64

typedef struct AHeapInfo AHeapInfo;
typedef struct AHeapProfileEnableCallbackInfo AHeapProfileEnableCallbackInfo;
typedef struct AHeapProfileDisableCallbackInfo AHeapProfileDisableCallbackInfo;

typedef void (*AHeapInfo_EnableCallback)(void *data,
					 const AHeapProfileEnableCallbackInfo *session_info);
typedef void (*AHeapInfo_DisableCallback)(void *data,
					  const AHeapProfileDisableCallbackInfo *session_info);

/* The sampling interval of the session that enabled the heap. */
uint64_t AHeapProfileEnableCallbackInfo_getSamplingInterval(
	const AHeapProfileEnableCallbackInfo *session_info);

/* A heap named @heap_name (at most HEAPPROFD_HEAP_NAME_SZ - 1 bytes), to
 * be registered. Return: NULL for a bad name or when 255 heaps exist. */
AHeapInfo *AHeapInfo_create(const char *heap_name);
/* Called when a session starts profiling the heap. Return: @info. */
AHeapInfo *AHeapInfo_setEnabledCallback(AHeapInfo *info, AHeapInfo_EnableCallback callback,
					void *data);
/* Called when it stops. Return: @info. */
AHeapInfo *AHeapInfo_setDisabledCallback(AHeapInfo *info, AHeapInfo_DisableCallback callback,
					 void *data);
/* Register the heap. Return: its id for the report calls, 0 on error. */
uint32_t AHeapProfile_registerHeap(AHeapInfo *info);
/* @size bytes were allocated at @alloc_id; sampled like malloc.
 * Return: whether it was sampled (then its free must be reported). */
bool AHeapProfile_reportAllocation(uint32_t heap_id, uint64_t alloc_id, uint64_t size);
/* An allocation the caller sampled itself (it stands for @size bytes).
 * Return: whether it was recorded. */
bool AHeapProfile_reportSample(uint32_t heap_id, uint64_t alloc_id, uint64_t size);
/* @alloc_id was freed. */
void AHeapProfile_reportFree(uint32_t heap_id, uint64_t alloc_id);

#ifdef __cplusplus
}
#endif

#endif
