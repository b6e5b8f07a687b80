// SPDX-License-Identifier: Apache-2.0
/*
 * hp_api.c - the custom-heap client API (include/perfetto-c/heap_profile.h)
 * over the heapprofd client: up to 255 named heaps (libc.malloc is heap 1),
 * a Poisson sampler per heap and a table of the sampled ids still live, so
 * that only their frees reach the ring. Called by the application, never
 * from inside malloc; the table and samplers sit behind one spinlock that
 * is only ever tried (a thread that cannot take it in a bounded number of
 * tries treats the call as not sampled), so a signal handler cannot
 * deadlock on it.
 */
#include <math.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "heapprofd/client/hp_client.h"
#include "perfetto-c/heap_profile.h"

#define EXPORT __attribute__((visibility("default")))
/* Sampled custom allocations remembered at once (open addressing). */
#define HP_API_SLOTS (1u << 16)
#define HP_API_MAX_LIVE (HP_API_SLOTS / 4 * 3)

struct AHeapInfo {
	char name[HP_HEAP_NAME_MAX];
	AHeapInfo_EnableCallback on_enable;
	void *enable_data;
	AHeapInfo_DisableCallback on_disable;
	void *disable_data;
	_Atomic uint64_t interval; /* the session's, as last told to the callbacks */
	_Atomic int ready;
	uint64_t left, rng; /* sampler, under the lock */
};

struct AHeapProfileEnableCallbackInfo {
	uint64_t interval;
};

struct AHeapProfileDisableCallbackInfo {
	int unused;
};

struct slot {
	uint64_t id;
	uint32_t heap; /* 0: empty */
	uint32_t tomb;
};

static struct AHeapInfo g_heaps[HP_MAX_HEAPS];
static _Atomic uint32_t g_next_heap = 2;
static _Atomic int g_lock;
static struct slot *g_slots;
static uint32_t g_live, g_used;

static int lock(void)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (atomic_exchange_explicit(&g_lock, 1, memory_order_acquire) == 0)
			return 1;
		sched_yield();
	}
	return 0;
}

static void unlock(void)
{
	atomic_store_explicit(&g_lock, 0, memory_order_release);
}

const char *hp_api_heap_name(uint32_t heap)
{
	if (heap < 2 || heap >= HP_MAX_HEAPS ||
	    !atomic_load_explicit(&g_heaps[heap].ready, memory_order_acquire))
		return NULL;
	return g_heaps[heap].name;
}

uint32_t hp_api_heap_count(void)
{
	return atomic_load_explicit(&g_next_heap, memory_order_acquire) - 2;
}

void hp_api_heap_state(uint32_t heap, uint64_t interval)
{
	struct AHeapInfo *h;
	uint64_t old;

	if (heap < 2 || heap >= HP_MAX_HEAPS)
		return;
	h = &g_heaps[heap];
	if (!atomic_load_explicit(&h->ready, memory_order_acquire))
		return;
	old = atomic_exchange_explicit(&h->interval, interval, memory_order_acq_rel);
	if (old == interval)
		return;
	if (interval && h->on_enable) {
		struct AHeapProfileEnableCallbackInfo info = {interval};

		h->on_enable(h->enable_data, &info);
	} else if (!interval && h->on_disable) {
		struct AHeapProfileDisableCallbackInfo info = {0};

		h->on_disable(h->disable_data, &info);
	}
}

EXPORT uint64_t AHeapProfileEnableCallbackInfo_getSamplingInterval(
	const AHeapProfileEnableCallbackInfo *session_info)
{
	return session_info ? session_info->interval : 0;
}

EXPORT AHeapInfo *AHeapInfo_create(const char *heap_name)
{
	size_t len;
	uint32_t id;

	if (!heap_name)
		return NULL;
	len = strnlen(heap_name, HP_HEAP_NAME_MAX);
	if (len == 0 || len >= HP_HEAP_NAME_MAX)
		return NULL;
	id = atomic_fetch_add_explicit(&g_next_heap, 1, memory_order_acq_rel);
	if (id >= HP_MAX_HEAPS) {
		atomic_store_explicit(&g_next_heap, HP_MAX_HEAPS, memory_order_release);
		return NULL;
	}
	memcpy(g_heaps[id].name, heap_name, len);
	g_heaps[id].name[len] = 0;
	return &g_heaps[id];
}

EXPORT AHeapInfo *AHeapInfo_setEnabledCallback(AHeapInfo *info,
					       AHeapInfo_EnableCallback callback, void *data)
{
	if (!info)
		return NULL;
	info->on_enable = callback;
	info->enable_data = data;
	return info;
}

EXPORT AHeapInfo *AHeapInfo_setDisabledCallback(AHeapInfo *info,
						AHeapInfo_DisableCallback callback, void *data)
{
	if (!info)
		return NULL;
	info->on_disable = callback;
	info->disable_data = data;
	return info;
}

EXPORT uint32_t AHeapProfile_registerHeap(AHeapInfo *info)
{
	uint32_t id;

	if (!info || info < &g_heaps[2] || info >= &g_heaps[HP_MAX_HEAPS])
		return 0;
	id = (uint32_t)(info - g_heaps);
	hp_client_init();
	atomic_store_explicit(&info->ready, 1, memory_order_release);
	hp_client_heap_registered(id, info->name);
	hp_api_heap_state(id, hp_heap_interval(id));
	return id;
}

static uint64_t slot_hash(uint32_t heap, uint64_t id)
{
	uint64_t h = (id ^ ((uint64_t)heap << 48)) * 0x9e3779b97f4a7c15ull;

	return (h ^ (h >> 29)) & (HP_API_SLOTS - 1);
}

/* Under the lock. */
static struct slot *find(uint32_t heap, uint64_t id)
{
	uint64_t i = slot_hash(heap, id), n;

	for (n = 0; n < HP_API_SLOTS; n++, i = (i + 1) & (HP_API_SLOTS - 1)) {
		struct slot *s = &g_slots[i];

		if (!s->heap && !s->tomb)
			return NULL;
		if (s->heap == heap && s->id == id)
			return s;
	}
	return NULL;
}

static void rehash(void)
{
	static struct slot tmp[HP_API_SLOTS];
	uint32_t i;

	memcpy(tmp, g_slots, sizeof(tmp));
	memset(g_slots, 0, sizeof(tmp));
	g_used = 0;
	for (i = 0; i < HP_API_SLOTS; i++) {
		if (tmp[i].heap) {
			uint64_t j = slot_hash(tmp[i].heap, tmp[i].id);

			while (g_slots[j].heap)
				j = (j + 1) & (HP_API_SLOTS - 1);
			g_slots[j] = tmp[i];
			g_slots[j].tomb = 0;
			g_used++;
		}
	}
}

/* Under the lock. Return: false when full. */
static int insert(uint32_t heap, uint64_t id)
{
	uint64_t i;

	if (!g_slots) {
		void *m = mmap(NULL, sizeof(struct slot) * HP_API_SLOTS, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return 0;
		g_slots = m;
	}
	if (find(heap, id))
		return 1;
	if (g_live >= HP_API_MAX_LIVE)
		return 0;
	if (g_used >= HP_API_MAX_LIVE)
		rehash();
	i = slot_hash(heap, id);
	while (g_slots[i].heap)
		i = (i + 1) & (HP_API_SLOTS - 1);
	if (!g_slots[i].tomb)
		g_used++;
	g_slots[i].heap = heap;
	g_slots[i].id = id;
	g_slots[i].tomb = 0;
	g_live++;
	return 1;
}

static uint64_t next_interval(struct AHeapInfo *h, uint64_t interval)
{
	uint64_t x = h->rng;
	double u, v;

	if (!x) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull + (uint64_t)(uintptr_t)h;
	}
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	h->rng = x;
	u = (double)((x >> 11) + 1) * (1.0 / 9007199254740993.0);
	v = -log(u) * (double)interval;
	return v < 1.0 ? 1 : (uint64_t)v;
}

static bool record(uint32_t heap, uint64_t id, uint64_t weight, uint64_t size)
{
	int ok;

	if (!lock())
		return false;
	ok = insert(heap, id);
	unlock();
	if (!ok)
		return false;
	hp_tls.in_hook++;
	ok = hp_record_alloc(heap, id, weight, size);
	hp_client_after_sample(&hp_tls, ok);
	hp_tls.in_hook--;
	return ok;
}

EXPORT bool AHeapProfile_reportAllocation(uint32_t heap_id, uint64_t alloc_id, uint64_t size)
{
	uint64_t iv = hp_heap_interval(heap_id), weight = 0, k = 0, left_size = size;
	struct AHeapInfo *h;

	if (!iv || heap_id < 2)
		return false;
	h = &g_heaps[heap_id];
	if (size >= iv) {
		weight = size;
	} else {
		if (!lock())
			return false;
		if (!h->left || h->left > 64 * iv)
			h->left = next_interval(h, iv);
		while (h->left <= left_size) {
			left_size -= h->left;
			h->left = next_interval(h, iv);
			k++;
		}
		h->left -= left_size;
		unlock();
		weight = k * iv;
	}
	if (!weight)
		return false;
	return record(heap_id, alloc_id, weight, size);
}

EXPORT bool AHeapProfile_reportSample(uint32_t heap_id, uint64_t alloc_id, uint64_t size)
{
	if (heap_id < 2 || !hp_heap_interval(heap_id))
		return false;
	return record(heap_id, alloc_id, size, size);
}

EXPORT void AHeapProfile_reportFree(uint32_t heap_id, uint64_t alloc_id)
{
	struct slot *s;
	int found = 0;

	if (heap_id < 2 || heap_id >= HP_MAX_HEAPS || !g_slots)
		return;
	if (!lock())
		return;
	s = find(heap_id, alloc_id);
	if (s) {
		s->heap = 0;
		s->tomb = 1;
		g_live--;
		found = 1;
	}
	unlock();
	if (found) {
		hp_tls.in_hook++;
		hp_record_free(heap_id, alloc_id);
		hp_tls.in_hook--;
	}
}
