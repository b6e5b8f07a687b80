// SPDX-License-Identifier: Apache-2.0
/*
 * sdk_category.c - the track event categories of this process: the
 * registry (indexes never change, so a category's flag byte is stable),
 * the TrackEventDescriptor the service lists, and which categories each
 * session records, by the rules of Perfetto's C SDK for track_event_config
 * (category_enabled()). Flags change under sdk_g.lock; writers only read
 * them.
 */
#include "sdk/sdk_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/track_event_config.pb-c.h"
#include "pb_fields.h"
#include "protozero/protozero.h"

volatile uint8_t sdk_cat_flags[PFC_MAX_CATEGORIES];
PFC_API const volatile uint8_t pfc_disabled_flag;

static struct pfc_category *g_cats[PFC_MAX_CATEGORIES];
static _Atomic uint32_t g_n_cats;
/* The config of each instance slot, to judge categories registered later. */
static Perfetto__Protos__TrackEventConfig *g_slot_cfg[SDK_MAX_INSTANCES];

struct pfc_category *sdk_category_get(uint32_t index)
{
	return index < atomic_load(&g_n_cats) ? g_cats[index] : NULL;
}

uint32_t sdk_categories_count(void)
{
	return atomic_load(&g_n_cats);
}

/*
 * A pattern is a name, or a prefix ending in one '*' ("gpu*", "*"); the
 * exact pass only takes plain names, the pattern pass only prefixes.
 */
static bool pattern_matches(const char *pat, const char *s, bool exact_pass)
{
	const char *star = strchr(pat, '*');

	if (!star)
		return exact_pass && strcmp(pat, s) == 0;
	if (exact_pass)
		return false;
	return strncmp(pat, s, (size_t)(star - pat)) == 0;
}

static bool any_matches(char *const *list, size_t n, const char *s, bool exact_pass)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pattern_matches(list[i], s, exact_pass))
			return true;
	return false;
}

static bool any_tag(char *const *list, size_t n, const struct pfc_category *c, bool exact_pass)
{
	size_t i;

	for (i = 0; i < c->n_tags; i++)
		if (any_matches(list, n, c->tags[i], exact_pass))
			return true;
	return false;
}

/* Perfetto's C SDK rules: exact matches first, then patterns; in each pass
 * enabled categories, enabled tags, disabled categories, disabled tags; the
 * first that matches decides, and a category nothing matches is off. */
static bool category_enabled(const Perfetto__Protos__TrackEventConfig *cfg,
			     const struct pfc_category *c)
{
	int pass;

	for (pass = 0; pass < 2; pass++) {
		bool exact = pass == 0;

		if (any_matches(cfg->enabled_categories, cfg->n_enabled_categories, c->name, exact))
			return true;
		if (any_tag(cfg->enabled_tags, cfg->n_enabled_tags, c, exact))
			return true;
		if (any_matches(cfg->disabled_categories, cfg->n_disabled_categories, c->name,
				exact))
			return false;
		if (any_tag(cfg->disabled_tags, cfg->n_disabled_tags, c, exact))
			return false;
	}
	return false;
}

static void set_flag(uint32_t index, unsigned slot, bool on)
{
	uint8_t v = sdk_cat_flags[index];

	sdk_cat_flags[index] = on ? (uint8_t)(v | (1u << slot)) : (uint8_t)(v & ~(1u << slot));
}

void sdk_categories_enable(unsigned slot, const uint8_t *cfg, size_t len)
{
	Perfetto__Protos__TrackEventConfig *c;
	uint32_t i, n = atomic_load(&g_n_cats);

	if (slot >= SDK_MAX_INSTANCES)
		return;
	c = perfetto__protos__track_event_config__unpack(NULL, cfg ? len : 0, cfg);
	if (!c)
		return;
	if (g_slot_cfg[slot])
		perfetto__protos__track_event_config__free_unpacked(g_slot_cfg[slot], NULL);
	g_slot_cfg[slot] = c;
	for (i = 0; i < n; i++)
		set_flag(i, slot, category_enabled(c, g_cats[i]));
}

void sdk_categories_disable(unsigned slot)
{
	uint32_t i, n = atomic_load(&g_n_cats);

	if (slot >= SDK_MAX_INSTANCES)
		return;
	for (i = 0; i < n; i++)
		set_flag(i, slot, false);
	if (g_slot_cfg[slot])
		perfetto__protos__track_event_config__free_unpacked(g_slot_cfg[slot], NULL);
	g_slot_cfg[slot] = NULL;
}

void sdk_categories_forget_sessions(void)
{
	unsigned slot;

	for (slot = 0; slot < SDK_MAX_INSTANCES; slot++)
		sdk_categories_disable(slot);
}

static void free_category(struct pfc_category *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n_tags; i++)
		free(c->tags[i]);
	free(c->tags);
	free(c->name);
	free(c->description);
	free(c);
}

PFC_API int pfc_category_register(struct pfc_category_ref *ref, const char *name,
				  const char *description, const char *const *tags,
				  size_t n_tags)
{
	struct pfc_category *c = NULL;
	uint32_t i, n;
	unsigned slot;
	size_t k;

	if (!ref || !name || !*name || (n_tags && !tags) || strlen(name) > 255)
		return -EINVAL;
	pthread_mutex_lock(&sdk_g.lock);
	n = atomic_load(&g_n_cats);
	for (i = 0; i < n; i++) {
		if (strcmp(g_cats[i]->name, name) == 0) {
			ref->cat = g_cats[i];
			ref->enabled = &sdk_cat_flags[i];
			pthread_mutex_unlock(&sdk_g.lock);
			return -EEXIST;
		}
	}
	if (n == PFC_MAX_CATEGORIES) {
		pthread_mutex_unlock(&sdk_g.lock);
		return -ENOSPC;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strdup(name)) ||
	    (description && !(c->description = strdup(description))) ||
	    (n_tags && !(c->tags = calloc(n_tags, sizeof(*c->tags)))))
		goto oom;
	for (k = 0; k < n_tags; k++) {
		if (!tags[k] || !(c->tags[k] = strdup(tags[k])))
			goto oom;
		c->n_tags++;
	}
	c->index = n;
	g_cats[n] = c;
	for (slot = 0; slot < SDK_MAX_INSTANCES; slot++) {
		if (g_slot_cfg[slot])
			set_flag(n, slot, category_enabled(g_slot_cfg[slot], c));
	}
	atomic_store(&g_n_cats, n + 1);
	ref->cat = c;
	ref->enabled = &sdk_cat_flags[n];
	pthread_mutex_unlock(&sdk_g.lock);
	sdk_on_categories_changed();
	return 0;
oom:
	pthread_mutex_unlock(&sdk_g.lock);
	free_category(c);
	return -ENOMEM;
}

uint8_t *sdk_categories_descriptor(size_t *out_len)
{
	struct pz_chunks ch;
	struct pz_msg root, desc, cat;
	uint32_t i, n = atomic_load(&g_n_cats);
	uint8_t *out;
	size_t k, len;

	if (pz_chunks_init(&ch, 4096, 16u << 20) < 0)
		return NULL;
	pz_msg_begin(&root, &ch.s, NULL);
	pz_begin_nested(&root, PB_DATA_SOURCE_DESCRIPTOR__TRACK_EVENT_DESCRIPTOR, &desc);
	for (i = 0; i < n; i++) {
		const struct pfc_category *c = g_cats[i];

		pz_begin_nested(&desc, PB_TRACK_EVENT_DESCRIPTOR__AVAILABLE_CATEGORIES, &cat);
		pz_append_string(&cat, PB_TRACK_EVENT_CATEGORY__NAME, c->name);
		if (c->description)
			pz_append_string(&cat, PB_TRACK_EVENT_CATEGORY__DESCRIPTION, c->description);
		for (k = 0; k < c->n_tags; k++)
			pz_append_string(&cat, PB_TRACK_EVENT_CATEGORY__TAGS, c->tags[k]);
		pz_end(&cat);
	}
	pz_end(&desc);
	pz_end(&root);
	len = pz_chunks_size(&ch);
	out = pz_stream_ok(&ch.s) ? malloc(len ? len : 1) : NULL;
	if (out)
		pz_chunks_copy(&ch, out, len);
	pz_chunks_fini(&ch);
	*out_len = len;
	return out;
}
