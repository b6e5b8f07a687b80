// SPDX-License-Identifier: Apache-2.0
/*
 * thermal_exynos.c - the Exynos ACPM thermal governor's ftrace events:
 * each sample of zone tz_id (BIG, MID, LITTLE, GPU, ISP, TPU, AUR) gives
 * the counters "<zone> Temperature" (current_temp) and "Tj-<zone> Cooling
 * Device" (cdev_state), each value with its thermal_zone_id arg. A bulk
 * event's samples are stamped with their own timestamp field, as in
 * Perfetto; an unknown zone is counted in
 * ftrace_thermal_exynos_acpm_unknown_tz_id. Called by ftrace.c.
 */
#include <stdio.h>

#include "pb_fields.h"
#include "protozero/protozero.h"
#include "trace_processor/import/ftrace/ftrace_int.h"

#define BULK_FIELDS (PB_THERMAL_EXYNOS_ACPM_BULK_FTRACE_EVENT__TIMESTAMP + 1)

static const char *const zones[] = {"BIG", "MID", "LITTLE", "GPU", "ISP", "TPU", "AUR"};

static void zone_counter(struct tp_import *imp, const struct tp_event *ev, int64_t ts,
			 const char *type, const char *fmt, uint32_t zone, double value)
{
	struct tp_dim dim = {"thermal_zone", TP_DIM_STR, 0};
	struct tp_argset args = {0};
	char name[64];
	int64_t row, set;

	dim.v = tp_db_str(imp->db, zones[zone]);
	snprintf(name, sizeof(name), fmt, zones[zone]);
	row = tp_counter_add(imp, ts,
			     tp_track_dims(imp, type, tp_db_str(imp->db, name), true, ev->machine,
					   &dim, 1, 0),
			     value);
	if (row < 0)
		return;
	tp_argset_int(imp, &args, tp_db_str(imp->db, "thermal_zone_id"), zone);
	set = tp_argset_commit(imp, &args);
	tp_argset_fini(&args);
	if (set != TP_NULL_INT)
		tp_set_int(&imp->db->counter, COUNTER_ARG_SET_ID, (size_t)row, set);
}

void tp_thermal_exynos(struct tp_import *imp, const struct tp_event *ev, bool bulk,
		       const uint8_t *data, size_t len)
{
	struct pz_field f[BULK_FIELDS];
	uint32_t zone;
	int64_t ts = ev->ts;
	double temp, cdev;

	if (pz_decode_table(data, len, f, BULK_FIELDS) != PZ_OK)
		return;
	/* Both events share tz_id (1), current_temp (2) and cdev_state (4). */
	zone = (uint32_t)f[PB_THERMAL_EXYNOS_ACPM_BULK_FTRACE_EVENT__TZ_ID].value;
	if (zone >= sizeof(zones) / sizeof(zones[0])) {
		tp_stat_add(imp, "ftrace_thermal_exynos_acpm_unknown_tz_id", -1, ev->machine, 1);
		return;
	}
	temp = (double)(uint32_t)f[PB_THERMAL_EXYNOS_ACPM_BULK_FTRACE_EVENT__CURRENT_TEMP].value;
	cdev = (double)(uint32_t)f[PB_THERMAL_EXYNOS_ACPM_BULK_FTRACE_EVENT__CDEV_STATE].value;
	if (bulk)
		ts = (int64_t)f[PB_THERMAL_EXYNOS_ACPM_BULK_FTRACE_EVENT__TIMESTAMP].value;
	zone_counter(imp, ev, ts, "acpm_thermal_temperature", "%s Temperature", zone, temp);
	zone_counter(imp, ev, ts, "acpm_cooling_device_counter", "Tj-%s Cooling Device", zone, cdev);
}
