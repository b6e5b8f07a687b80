// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_test.c - unit tests of the SDK's pieces that need no service: which
 * categories a track_event_config enables (Perfetto's C SDK rules, per
 * instance slot), the descriptor the service lists, the TSC clock against
 * BOOTTIME, and the API's argument checks before pfc_init(). The SDK end
 * to end is tests/integration/sdk_c.sh.
 */
#include "harness.h"

#include <errno.h>
#include <stdlib.h>

#include "config/data_source_config.pb-c.h"
#include "config/track_event_config.pb-c.h"
#include "pb_fields.h"
#include "protozero/protozero.h"
#include "sdk/sdk_int.h"

static PFC_CATEGORY(c_a);
static PFC_CATEGORY(c_b);
static PFC_CATEGORY(c_bx);
static PFC_CATEGORY(c_slow);
static PFC_CATEGORY(c_late);

static void register_all(void)
{
	static const char *const slow[] = {"slow"};

	ASSERT_EQ(pfc_category_register(&c_a, "a", "first", NULL, 0), 0);
	ASSERT_EQ(pfc_category_register(&c_b, "by", NULL, NULL, 0), 0);
	ASSERT_EQ(pfc_category_register(&c_bx, "bx", NULL, NULL, 0), 0);
	ASSERT_EQ(pfc_category_register(&c_slow, "heavy", NULL, slow, 1), 0);
}

/* Enables slot @slot with a config of these lists (NULL-terminated). */
static void enable(unsigned slot, const char **en, const char **dis, const char **en_tags,
		   const char **dis_tags)
{
	Perfetto__Protos__TrackEventConfig c = PERFETTO__PROTOS__TRACK_EVENT_CONFIG__INIT;
	uint8_t buf[1024];
	size_t n;

	for (n = 0; en && en[n]; n++)
		;
	c.n_enabled_categories = n;
	c.enabled_categories = (char **)en;
	for (n = 0; dis && dis[n]; n++)
		;
	c.n_disabled_categories = n;
	c.disabled_categories = (char **)dis;
	for (n = 0; en_tags && en_tags[n]; n++)
		;
	c.n_enabled_tags = n;
	c.enabled_tags = (char **)en_tags;
	for (n = 0; dis_tags && dis_tags[n]; n++)
		;
	c.n_disabled_tags = n;
	c.disabled_tags = (char **)dis_tags;
	n = perfetto__protos__track_event_config__pack(&c, buf);
	sdk_categories_enable(slot, buf, n);
}

/* 1 if instance slot @slot records the category of @r. */
static unsigned on(unsigned slot, const struct pfc_category_ref *r)
{
	return (*r->enabled >> slot) & 1u;
}

#define FLAGS(slot) (on(slot, &c_a) << 3 | on(slot, &c_b) << 2 | on(slot, &c_bx) << 1 | on(slot, &c_slow))

TEST(categories_follow_c_sdk_rules)
{
	const char *all[] = {"*", NULL}, *a[] = {"a", NULL}, *bstar[] = {"b*", NULL};
	const char *bx[] = {"bx", NULL}, *slow[] = {"slow", NULL};

	register_all();
	ASSERT_FALSE(PFC_ENABLED(c_a));

	/* No rule matches: off (unlike the C++ SDK). */
	enable(0, NULL, NULL, NULL, NULL);
	ASSERT_EQ(FLAGS(0), 0);
	/* "*" takes everything, tagged ones included. */
	enable(0, all, NULL, NULL, NULL);
	ASSERT_EQ(FLAGS(0), 0xf);
	/* An exact name beats a disabled pattern. */
	enable(0, a, all, NULL, NULL);
	ASSERT_EQ(FLAGS(0), 0x8);
	/* An exact disabled name beats an enabled pattern. */
	enable(0, bstar, bx, NULL, NULL);
	ASSERT_EQ(FLAGS(0), 0x4);
	/* Tags: enabled by tag; a disabled exact tag beats an enabled "*". */
	enable(0, NULL, NULL, slow, NULL);
	ASSERT_EQ(FLAGS(0), 0x1);
	enable(0, all, NULL, NULL, slow);
	ASSERT_EQ(FLAGS(0), 0xe);
	/* Slots are independent; disabling one leaves the other. */
	enable(1, a, NULL, NULL, NULL);
	ASSERT_EQ(FLAGS(0), 0xe);
	ASSERT_EQ(FLAGS(1), 0x8);
	sdk_categories_disable(0);
	ASSERT_EQ(FLAGS(0), 0);
	ASSERT_EQ(FLAGS(1), 0x8);
	ASSERT_TRUE(PFC_ENABLED(c_a));
	ASSERT_FALSE(PFC_ENABLED(c_b));
	sdk_categories_disable(1);
	ASSERT_FALSE(PFC_ENABLED(c_a));
}

TEST(categories_registered_late_follow_sessions)
{
	const char *lstar[] = {"la*", NULL};

	register_all();
	enable(2, lstar, NULL, NULL, NULL);
	ASSERT_EQ(pfc_category_register(&c_late, "late", NULL, NULL, 0), 0);
	ASSERT_EQ(on(2, &c_late), 1);
	ASSERT_EQ(on(2, &c_a), 0);
	/* The same name again: the ref follows the existing category. */
	{
		PFC_CATEGORY(again);

		ASSERT_EQ(pfc_category_register(&again, "late", NULL, NULL, 0), -EEXIST);
		ASSERT_TRUE(again.enabled == c_late.enabled);
	}
	sdk_categories_disable(2);
}

TEST(category_register_rejects_bad_input)
{
	PFC_CATEGORY(r);
	char longname[300];

	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	ASSERT_EQ(pfc_category_register(NULL, "x", NULL, NULL, 0), -EINVAL);
	ASSERT_EQ(pfc_category_register(&r, "", NULL, NULL, 0), -EINVAL);
	ASSERT_EQ(pfc_category_register(&r, NULL, NULL, NULL, 0), -EINVAL);
	ASSERT_EQ(pfc_category_register(&r, longname, NULL, NULL, 0), -EINVAL);
	ASSERT_EQ(pfc_category_register(&r, "x", NULL, NULL, 2), -EINVAL);
	/* Still disabled, and safe to use. */
	ASSERT_FALSE(PFC_ENABLED(r));
	PFC_SLICE_BEGIN(r, "nothing");
}

TEST(descriptor_lists_categories)
{
	struct pz_reader rd, rd2, rd3;
	struct pz_field f, g, h;
	uint8_t *d;
	size_t len = 0;
	unsigned n_cats = 0, n_tags = 0;
	bool saw_heavy = false;

	register_all();
	d = sdk_categories_descriptor(&len);
	ASSERT_TRUE(d != NULL);
	pz_reader_init(&rd, d, len);
	while (pz_reader_next(&rd, &f) > 0) {
		ASSERT_EQ(f.id, PB_DATA_SOURCE_DESCRIPTOR__TRACK_EVENT_DESCRIPTOR);
		pz_reader_init(&rd2, f.data, f.size);
		while (pz_reader_next(&rd2, &g) > 0) {
			ASSERT_EQ(g.id, PB_TRACK_EVENT_DESCRIPTOR__AVAILABLE_CATEGORIES);
			n_cats++;
			pz_reader_init(&rd3, g.data, g.size);
			while (pz_reader_next(&rd3, &h) > 0) {
				if (h.id == PB_TRACK_EVENT_CATEGORY__NAME && h.size == 5 &&
				    memcmp(h.data, "heavy", 5) == 0)
					saw_heavy = true;
				if (h.id == PB_TRACK_EVENT_CATEGORY__TAGS)
					n_tags++;
			}
		}
	}
	ASSERT_EQ(rd.err, PZ_OK);
	ASSERT_EQ(n_cats, 4);
	ASSERT_EQ(n_tags, 1);
	ASSERT_TRUE(saw_heavy);
	free(d);
}

TEST(clock_follows_boottime)
{
	uint64_t a, b, boot, prev = 0;
	uint32_t ver;
	int i;

	sdk_clock_init();
	for (i = 0; i < 1000; i++) {
		a = sdk_clock_now(&ver);
		ASSERT_GE(a, prev);
		prev = a;
	}
	boot = sdk_clock_boottime();
	b = sdk_clock_now(&ver);
	/* The TSC's rate is the kernel's (or measured): close to BOOTTIME. */
	ASSERT_LT(b > boot ? b - boot : boot - b, 2 * 1000 * 1000);
	if (!sdk_clock_use_tsc)
		harness_skip("no invariant TSC here: events read CLOCK_BOOTTIME");
}

static uint64_t clock_error_ns(void)
{
	uint32_t ver;
	uint64_t a = sdk_clock_now(&ver), boot = sdk_clock_boottime(), b = sdk_clock_now(&ver);
	uint64_t mid = a + (b - a) / 2;

	return mid > boot ? mid - boot : boot - mid;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* A first rate 200 ppm off (a 2 ms calibration interrupted by a busy
 * machine, or the kernel's rate while NTP slews BOOTTIME): after the
 * refinements of the first 300 ms the rate is BOOTTIME's, and the clock
 * stays within a few microseconds of it for the next 300 ms (the skewed
 * rate would be 60 us off). */
TEST(clock_refined_rate_tracks_boottime)
{
	static struct sdk_clock_map skewed;
	uint64_t worst = 0, e;
	int i, tries;

	sdk_clock_init();
	if (!sdk_clock_use_tsc)
		harness_skip("no invariant TSC here: events read CLOCK_BOOTTIME");
	skewed = *atomic_load(&sdk_clock_cur);
	skewed.mult += skewed.mult / 5000;
	skewed.version += 1000;
	atomic_store(&sdk_clock_cur, &skewed);
	sleep_ms(10);
	sdk_clock_refine();
	sleep_ms(30);
	sdk_clock_refine();
	sleep_ms(100);
	sdk_clock_refine();
	sleep_ms(200);
	sdk_clock_refine();
	ASSERT_LT(clock_error_ns(), 1000);
	for (i = 0; i < 3; i++) {
		sleep_ms(100);
		/* The least of a few readings: an interrupted one says nothing. */
		e = UINT64_MAX;
		for (tries = 0; tries < 5; tries++) {
			uint64_t x = clock_error_ns();

			if (x < e)
				e = x;
		}
		if (e > worst)
			worst = e;
	}
	ASSERT_LT(worst, 3000);
}

TEST(api_before_init)
{
	struct pfc_stats st;
	struct pfc_track *tr = NULL;

	ASSERT_EQ(pfc_flush(10), -EPERM);
	ASSERT_EQ(pfc_thread_set_name("x"), -EPERM);
	ASSERT_EQ(pfc_init((enum pfc_backend)7, NULL), -EINVAL);
	ASSERT_EQ(pfc_init(PFC_BACKEND_IN_PROCESS, NULL), -EINVAL); /* no output set */
	ASSERT_EQ(pfc_set_shm_size_kb(3), -EINVAL);
	ASSERT_EQ(pfc_set_socket(""), -EINVAL);
	ASSERT_EQ(pfc_set_in_process_output(NULL, NULL, 0), -EINVAL);
	ASSERT_EQ(pfc_get_stats(NULL, sizeof(st)), -EINVAL);
	ASSERT_EQ(pfc_get_stats(&st, sizeof(st)), 0);
	ASSERT_EQ(st.events_written, 0);
	ASSERT_EQ(pfc_track_create(NULL, PFC_TRACK_SLICES, 0, &tr), -EINVAL);
	ASSERT_EQ(pfc_track_create("t", (enum pfc_track_kind)9, 0, &tr), -EINVAL);
	ASSERT_EQ(pfc_track_create("t", PFC_TRACK_COUNTER, 0, &tr), 0);
	ASSERT_NE(pfc_track_uuid(tr), 0);
	pfc_track_destroy(tr);
	ASSERT_EQ(pfc_track_create("t", PFC_TRACK_COUNTER, 1234, &tr), 0);
	ASSERT_EQ(pfc_track_uuid(tr), 1234);
	pfc_track_destroy(tr);
	pfc_shutdown(); /* not initialized: nothing to do */
	/* Events with no SDK running are no-ops. */
	pfc_te_slice_begin(NULL, "x");
	pfc_te_event(NULL, NULL);
}
