// SPDX-License-Identifier: Apache-2.0
/*
 * sequence.c - packet sequences (trusted_packet_sequence_id): a slot per
 * sequence with its packet and loss counts and default clock, and its
 * incremental state as numbered generations: interned data, the
 * TracePacketDefaults' TrackEventDefaults, the thread descriptor and
 * whether the state is valid. The tokenizer feeds it every packet in file
 * order; the importers read interned data of the generation an event was
 * tokenized in, at parse time, so sorting cannot mix states up.
 *
 * Interned data is never copied: entries point into packet bytes, which
 * live in the import arena until parsing ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/common/common.h"

#define NO_GEN UINT32_MAX
/* Generations one trace can make us keep. */
#define MAX_GENERATIONS (1u << 26)
/* Probe at most this many slots past a colliding hash. */
#define INTERN_PROBES 8

struct slot {
	uint32_t id;
	uint32_t gen;                 /* current generation; NO_GEN: none yet */
	uint64_t default_clock_id;    /* TracePacketDefaults.timestamp_clock_id; 0: none */
	uint64_t n_packets;
	uint64_t n_lost;              /* previous_packet_dropped after the first packet */
	uint64_t n_causes[8];         /* of those, with DATA_LOSS_* bit i + 1 set */
	uint64_t n_needs, n_needs_skipped; /* packets needing incremental state; skipped */
	bool has_first_packet;        /* a packet said first_packet_on_sequence */
};

struct tp_sequences {
	struct slot *slots;           /* TP_MAX_SEQUENCES */
	size_t n_slots;
	struct hmap index;            /* trusted_packet_sequence_id -> slot */
	struct tp_seq_gen *gens;
	size_t n_gens, cap_gens;
	uint32_t next_intern_gen;
	struct hmap interned;         /* hash(intern gen, field, iid) -> index in intern */
	struct tp_interned *intern;
	size_t n_intern, cap_intern;
};

int tp_seq_init(struct tp_import *imp)
{
	struct tp_sequences *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->slots = calloc(TP_MAX_SEQUENCES, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return -ENOMEM;
	}
	imp->seqs = s;
	return 0;
}

void tp_seq_fini(struct tp_import *imp)
{
	struct tp_sequences *s = imp->seqs;

	if (!s)
		return;
	free(s->slots);
	hmap_fini(&s->index);
	free(s->gens);
	hmap_fini(&s->interned);
	free(s->intern);
	free(s);
	imp->seqs = NULL;
}

/* -------------------------------------------------------------- slots ---- */

int tp_seq_slot(struct tp_import *imp, uint32_t seq_id)
{
	struct tp_sequences *s = imp->seqs;
	uint64_t v;

	if (hmap_get(&s->index, seq_id, &v))
		return (int)v;
	if (s->n_slots == TP_MAX_SEQUENCES || hmap_put(&s->index, seq_id, s->n_slots) < 0)
		return -1;
	memset(&s->slots[s->n_slots], 0, sizeof(s->slots[0]));
	s->slots[s->n_slots].id = seq_id;
	s->slots[s->n_slots].gen = NO_GEN;
	return (int)s->n_slots++;
}

uint32_t tp_seq_id(const struct tp_import *imp, uint32_t slot)
{
	return slot < imp->seqs->n_slots ? imp->seqs->slots[slot].id : 0;
}

uint64_t tp_seq_default_clock(const struct tp_import *imp, uint32_t slot)
{
	return imp->seqs->slots[slot].default_clock_id;
}

bool tp_seq_loss(const struct tp_import *imp, uint64_t seq_id, struct tp_seq_loss *out)
{
	const struct slot *sl;
	uint64_t v;

	if (seq_id > UINT32_MAX || !hmap_get(&imp->seqs->index, seq_id, &v))
		return false;
	sl = &imp->seqs->slots[v];
	out->lost = sl->n_lost;
	memcpy(out->causes, sl->n_causes, sizeof(out->causes));
	out->incremental_dropped = sl->n_needs_skipped > 0 && sl->n_needs_skipped == sl->n_needs;
	return true;
}

bool tp_seq_had_first_packet(const struct tp_import *imp, uint32_t seq_id)
{
	uint64_t v;

	return hmap_get(&imp->seqs->index, seq_id, &v) && imp->seqs->slots[v].has_first_packet;
}

/* -------------------------------------------------------- generations ---- */

struct tp_seq_gen *tp_seq_new_gen(struct tp_import *imp, uint32_t slot)
{
	struct tp_sequences *s = imp->seqs;
	struct slot *sl = &s->slots[slot];
	struct tp_seq_gen *g;

	if (s->n_gens >= MAX_GENERATIONS ||
	    tp_array_grow((void **)&s->gens, &s->cap_gens, s->n_gens + 1, sizeof(*s->gens), 64) <
		    0) {
		tp_stat_add(imp, "track_event_tokenizer_errors", -1, 0, 1);
		/* The current one, if any, changes instead. */
		return sl->gen != NO_GEN ? &s->gens[sl->gen] : NULL;
	}
	g = &s->gens[s->n_gens];
	if (sl->gen != NO_GEN) {
		*g = s->gens[sl->gen];
	} else {
		memset(g, 0, sizeof(*g));
		g->slot = slot;
		g->intern_gen = ++s->next_intern_gen;
	}
	sl->gen = (uint32_t)s->n_gens++;
	return g;
}

uint32_t tp_seq_gen_of(const struct tp_import *imp, uint32_t slot)
{
	if (slot >= TP_MAX_SEQUENCES)
		return UINT32_MAX;
	return imp->seqs->slots[slot].gen;
}

uint32_t tp_seq_cur_gen(struct tp_import *imp, uint32_t slot)
{
	if (imp->seqs->slots[slot].gen == NO_GEN)
		tp_seq_new_gen(imp, slot);
	return imp->seqs->slots[slot].gen;
}

struct tp_seq_gen *tp_seq_gen(const struct tp_import *imp, uint32_t gen)
{
	return gen < imp->seqs->n_gens ? &imp->seqs->gens[gen] : NULL;
}

/* ------------------------------------------------------ interned data ---- */

/* Fields of InternedData whose entries are { iid = 1; name/str = 2 }. */
static bool string_like(uint32_t field)
{
	switch (field) {
	case PB_INTERNED_DATA__EVENT_CATEGORIES:
	case PB_INTERNED_DATA__EVENT_NAMES:
	case PB_INTERNED_DATA__DEBUG_ANNOTATION_NAMES:
	case PB_INTERNED_DATA__DEBUG_ANNOTATION_VALUE_TYPE_NAMES:
	case PB_INTERNED_DATA__DEBUG_ANNOTATION_STRING_VALUES:
	case PB_INTERNED_DATA__LOG_MESSAGE_BODY:
	case PB_INTERNED_DATA__CORRELATION_ID_STR:
	case PB_INTERNED_DATA__HISTOGRAM_NAMES:
	case PB_INTERNED_DATA__KERNEL_SYMBOLS:
		return true;
	default:
		return false;
	}
}

static uint64_t intern_key(uint32_t intern_gen, uint32_t field, uint64_t iid)
{
	return tp_hash_mix(tp_hash_mix(intern_gen, field), iid);
}

static bool intern_match(const struct tp_interned *e, uint32_t intern_gen, uint32_t field,
			 uint64_t iid)
{
	return e->intern_gen == intern_gen && e->field == field && e->iid == iid;
}

static void intern_one(struct tp_import *imp, struct tp_sequences *s, uint32_t intern_gen,
		       uint32_t field, const uint8_t *msg, uint32_t len)
{
	struct pz_reader r;
	struct pz_field f;
	struct tp_interned e = {0};
	bool has_iid = false;
	uint64_t k, v;
	int i;

	pz_reader_init(&r, msg, len);
	while (pz_reader_next(&r, &f) > 0) {
		if (f.id == 1 && f.wire_type == PZ_WIRE_VARINT) {
			e.iid = f.value;
			has_iid = true;
		} else if (f.id == 2 && f.wire_type == PZ_WIRE_LEN && string_like(field)) {
			e.str = tp_str_intern(&imp->db->strings, (const char *)f.data, f.size);
		}
	}
	if (!has_iid || r.err != PZ_OK) {
		tp_stat_add(imp, "interned_data_tokenizer_errors", -1, 0, 1);
		return;
	}
	e.intern_gen = intern_gen;
	e.field = field;
	e.msg = msg;
	e.len = len;
	k = intern_key(intern_gen, field, e.iid);
	for (i = 0; i < INTERN_PROBES; i++, k++) {
		if (!hmap_get(&s->interned, k, &v))
			break;
		/* Re-interning an iid within a generation keeps the first entry. */
		if (intern_match(&s->intern[v], intern_gen, field, e.iid))
			return;
	}
	if (i == INTERN_PROBES)
		return;
	if (tp_array_grow((void **)&s->intern, &s->cap_intern, s->n_intern + 1, sizeof(*s->intern),
			  256) < 0 ||
	    hmap_put(&s->interned, k, s->n_intern) < 0) {
		tp_stat_add(imp, "track_event_tokenizer_errors", -1, 0, 1);
		return;
	}
	s->intern[s->n_intern++] = e;
}

const struct tp_interned *tp_seq_interned(struct tp_import *imp, uint32_t gen, uint32_t field,
					  uint64_t iid)
{
	const struct tp_interned *e = tp_seq_interned_quiet(imp, gen, field, iid);

	if (!e)
		tp_stat_add(imp, "interned_data_tokenizer_errors", -1, 0, 1);
	return e;
}

const struct tp_interned *tp_seq_interned_quiet(struct tp_import *imp, uint32_t gen,
						uint32_t field, uint64_t iid)
{
	struct tp_sequences *s = imp->seqs;
	uint32_t intern_gen;
	uint64_t k, v;
	int i;

	if (gen >= s->n_gens)
		return NULL;
	intern_gen = s->gens[gen].intern_gen;
	k = intern_key(intern_gen, field, iid);
	for (i = 0; i < INTERN_PROBES; i++, k++) {
		if (!hmap_get(&s->interned, k, &v))
			break;
		if (intern_match(&s->intern[v], intern_gen, field, iid))
			return &s->intern[v];
	}
	return NULL;
}

uint64_t tp_seq_interned_index(const struct tp_import *imp, const struct tp_interned *e)
{
	return (uint64_t)(e - imp->seqs->intern);
}

static void interned_data(struct tp_import *imp, struct tp_sequences *s, uint32_t gen,
			  const uint8_t *data, uint32_t len)
{
	struct pz_reader r;
	struct pz_field f;
	uint32_t intern_gen = s->gens[gen].intern_gen;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.wire_type == PZ_WIRE_LEN)
			intern_one(imp, s, intern_gen, f.id, f.data, f.size);
	if (r.err != PZ_OK)
		tp_stat_add(imp, "interned_data_tokenizer_errors", -1, 0, 1);
}

/* ------------------------------------------------------------ packets ---- */

/* TracePacketDefaults.stack_sample_defaults (beyond the decode table). */
static void stack_sample_defaults(struct tp_seq_gen *g, const uint8_t *data, uint32_t len)
{
	struct pz_reader r;
	struct pz_field f;

	pz_reader_init(&r, data, len);
	while (pz_reader_next(&r, &f) > 0)
		if (f.id == PB_TRACE_PACKET_DEFAULTS__STACK_SAMPLE_DEFAULTS &&
		    f.wire_type == PZ_WIRE_LEN) {
			g->ss_defaults = f.data;
			g->ss_defaults_len = f.size;
		}
}

unsigned tp_seq_on_packet(struct tp_import *imp, uint32_t slot, const struct tp_packet_hdr *h)
{
	bool needs = h->seq_flags & PBE_TRACE_PACKET_SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
	struct tp_sequences *s = imp->seqs;
	struct slot *sl = &s->slots[slot];
	struct tp_seq_gen *g;
	unsigned out = 0;

	if (h->defaults) {
		struct pz_field d[59];

		const struct pz_field *c = &d[PB_TRACE_PACKET_DEFAULTS__TIMESTAMP_CLOCK_ID];

		if (pz_decode_table(h->defaults, h->defaults_len, d, 59) == PZ_OK && c->id)
			sl->default_clock_id = c->value;
	}
	/* The first packet of a sequence always says "dropped before". */
	if (h->dropped && sl->n_packets > 0) {
		unsigned i;

		sl->n_lost++;
		for (i = 0; i < 8; i++)
			if (h->dropped_causes & (2u << i))
				sl->n_causes[i]++;
	}
	sl->n_packets++;
	if (h->first_on_seq)
		sl->has_first_packet = true;
	if (h->cleared) {
		if (!h->has_seq_id) {
			tp_stat_add(imp, "incremental_state_cleared_missing_sequence_id", -1,
				    h->machine, 1);
		} else if ((g = tp_seq_new_gen(imp, slot))) {
			g->intern_gen = ++s->next_intern_gen;
			g->defaults = NULL;
			g->defaults_len = 0;
			g->perf_defaults = NULL;
			g->perf_defaults_len = 0;
			g->ss_defaults = NULL;
			g->ss_defaults_len = 0;
			g->valid = true;
			out |= TP_SEQ_RESET;
		}
	} else if (h->dropped && h->has_seq_id && sl->gen != NO_GEN && s->gens[sl->gen].valid) {
		/* Interned data stays, but nothing may use it until a clear. */
		if ((g = tp_seq_new_gen(imp, slot))) {
			g->valid = false;
			out |= TP_SEQ_RESET;
		}
	}
	if (h->defaults) {
		struct pz_field d[13];

		if (!h->has_seq_id) {
			tp_stat_add(imp, "trace_packet_defaults_missing_sequence_id", -1,
				    h->machine, 1);
		} else if (pz_decode_table(h->defaults, h->defaults_len, d, 13) == PZ_OK &&
			   (g = tp_seq_new_gen(imp, slot))) {
			const struct pz_field *t =
				&d[PB_TRACE_PACKET_DEFAULTS__TRACK_EVENT_DEFAULTS];
			const struct pz_field *perf =
				&d[PB_TRACE_PACKET_DEFAULTS__PERF_SAMPLE_DEFAULTS];

			g->defaults = t->id && t->wire_type == PZ_WIRE_LEN ? t->data : NULL;
			g->defaults_len = t->id ? t->size : 0;
			g->perf_defaults = perf->id && perf->wire_type == PZ_WIRE_LEN ? perf->data
										     : NULL;
			g->perf_defaults_len = g->perf_defaults ? perf->size : 0;
			g->ss_defaults = NULL;
			g->ss_defaults_len = 0;
			stack_sample_defaults(g, h->defaults, h->defaults_len);
		}
	}
	if (h->interned) {
		uint32_t gen = tp_seq_cur_gen(imp, slot);

		if (!h->has_seq_id)
			tp_stat_add(imp, "interned_data_missing_sequence_id", -1, h->machine, 1);
		else if (gen == NO_GEN || !s->gens[gen].valid)
			tp_stat_add(imp, "interned_data_skipped_incremental_state_invalid", -1,
				    h->machine, 1);
		else
			interned_data(imp, s, gen, h->interned, h->interned_len);
	}
	if (needs)
		sl->n_needs++;
	if (!needs || (sl->gen != NO_GEN && s->gens[sl->gen].valid))
		return out;
	sl->n_needs_skipped++;
	tp_stat_add(imp, "packet_skipped_seq_needs_incremental_state_invalid", -1, h->machine, 1);
	return out | TP_SEQ_DROP;
}
