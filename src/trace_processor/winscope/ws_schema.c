// SPDX-License-Identifier: Apache-2.0
/*
 * ws_schema.c - the schema of Winscope's SurfaceFlinger layers protos
 * (LayersSnapshotProto and every message it reaches: field numbers, names,
 * types, and enum value names, as Android declares them), for the
 * walk of ws_walk.c (winscope.h). Fields are listed by number.
 */
#include <stddef.h>

#include "trace_processor/winscope/winscope.h"

#define F(num, name, type) {num, name, WS_##type, false, -1}
#define R(num, name, type) {num, name, WS_##type, true, -1}
#define M(num, name, msg) {num, name, WS_MESSAGE, false, WS_MSG_##msg}
#define RM(num, name, msg) {num, name, WS_MESSAGE, true, WS_MSG_##msg}
#define E(num, name, en) {num, name, WS_ENUM, false, WS_ENUM_##en}
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct ws_field k_snapshot[] = {
	F(1, "elapsed_realtime_nanos", SFIXED64),
	F(2, "where", STRING),
	M(3, "layers", LAYERS),
	F(4, "hwc_blob", STRING),
	F(5, "excludes_composition_state", BOOL),
	F(6, "missed_entries", UINT32),
	RM(7, "displays", DISPLAY),
	F(8, "vsync_id", INT64),
};

static const struct ws_field k_layers[] = {
	RM(1, "layers", LAYER),
};

static const struct ws_field k_display[] = {
	F(1, "id", UINT64),
	F(2, "name", STRING),
	F(3, "layer_stack", UINT32),
	M(4, "size", SIZE),
	M(5, "layer_stack_space_rect", RECT),
	M(6, "transform", TRANSFORM),
	F(7, "is_virtual", BOOL),
	F(8, "dpi_x", DOUBLE),
	F(9, "dpi_y", DOUBLE),
};

static const struct ws_field k_layer[] = {
	F(1, "id", INT32),
	F(2, "name", STRING),
	R(3, "children", INT32),
	R(4, "relatives", INT32),
	F(5, "type", STRING),
	M(6, "transparent_region", REGION),
	M(7, "visible_region", REGION),
	M(8, "damage_region", REGION),
	F(9, "layer_stack", UINT32),
	F(10, "z", INT32),
	M(11, "position", POSITION),
	M(12, "requested_position", POSITION),
	M(13, "size", SIZE),
	M(14, "crop", RECT),
	M(15, "final_crop", RECT),
	F(16, "is_opaque", BOOL),
	F(17, "invalidate", BOOL),
	F(18, "dataspace", STRING),
	F(19, "pixel_format", STRING),
	M(20, "color", COLOR),
	M(21, "requested_color", COLOR),
	F(22, "flags", UINT32),
	M(23, "transform", TRANSFORM),
	M(24, "requested_transform", TRANSFORM),
	F(25, "parent", INT32),
	F(26, "z_order_relative_of", INT32),
	M(27, "active_buffer", ACTIVE_BUFFER),
	F(28, "queued_frames", INT32),
	F(29, "refresh_pending", BOOL),
	M(30, "hwc_frame", RECT),
	M(31, "hwc_crop", FLOAT_RECT),
	F(32, "hwc_transform", INT32),
	F(33, "window_type", INT32),
	F(34, "app_id", INT32),
	E(35, "hwc_composition_type", HWC_COMPOSITION_TYPE),
	F(36, "is_protected", BOOL),
	F(37, "curr_frame", UINT64),
	RM(38, "barrier_layer", BARRIER_LAYER),
	M(39, "buffer_transform", TRANSFORM),
	F(40, "effective_scaling_mode", INT32),
	F(41, "corner_radius", FLOAT),
	RM(42, "metadata", METADATA_ENTRY),
	M(43, "effective_transform", TRANSFORM),
	M(44, "source_bounds", FLOAT_RECT),
	M(45, "bounds", FLOAT_RECT),
	M(46, "screen_bounds", FLOAT_RECT),
	M(47, "input_window_info", INPUT_WINDOW_INFO),
	M(48, "corner_radius_crop", FLOAT_RECT),
	F(49, "shadow_radius", FLOAT),
	M(50, "color_transform", COLOR_TRANSFORM),
	F(51, "is_relative_of", BOOL),
	F(52, "background_blur_radius", INT32),
	F(53, "owner_uid", UINT32),
	RM(54, "blur_regions", BLUR_REGION),
	F(55, "is_trusted_overlay", BOOL),
	F(56, "requested_corner_radius", FLOAT),
	M(57, "destination_frame", RECT),
	F(58, "original_id", UINT32),
	E(59, "trusted_overlay", TRUSTED_OVERLAY),
	F(60, "background_blur_scale", FLOAT),
	M(61, "corner_radii", CORNER_RADII),
	M(62, "requested_corner_radii", CORNER_RADII),
	M(63, "client_drawn_corner_radii", CORNER_RADII),
	F(64, "system_content_priority", INT32),
	M(65, "box_shadow_settings", BOX_SHADOW_SETTINGS),
	M(66, "border_settings", BORDER_SETTINGS),
	M(67, "effective_radii", CORNER_RADII),
	M(68, "reported_radii", CORNER_RADII),
	F(69, "disable_client_drawn_radii", BOOL),
};

static const struct ws_field k_position[] = {
	F(1, "x", FLOAT),
	F(2, "y", FLOAT),
};

static const struct ws_field k_float_rect[] = {
	F(1, "left", FLOAT),
	F(2, "top", FLOAT),
	F(3, "right", FLOAT),
	F(4, "bottom", FLOAT),
};

static const struct ws_field k_active_buffer[] = {
	F(1, "width", UINT32),
	F(2, "height", UINT32),
	F(3, "stride", UINT32),
	F(4, "format", INT32),
	F(5, "usage", UINT64),
};

static const struct ws_field k_barrier_layer[] = {
	F(1, "id", INT32),
	F(2, "frame_number", UINT64),
};

/* map<int32, bytes> metadata: its entries. */
static const struct ws_field k_metadata_entry[] = {
	F(1, "key", INT32),
	F(2, "value", BYTES),
};

static const struct ws_field k_region[] = {
	RM(2, "rect", RECT),
};

static const struct ws_field k_size[] = {
	F(1, "w", INT32),
	F(2, "h", INT32),
};

static const struct ws_field k_transform[] = {
	F(1, "dsdx", FLOAT),
	F(2, "dtdx", FLOAT),
	F(3, "dsdy", FLOAT),
	F(4, "dtdy", FLOAT),
	F(5, "type", INT32),
};

static const struct ws_field k_color[] = {
	F(1, "r", FLOAT),
	F(2, "g", FLOAT),
	F(3, "b", FLOAT),
	F(4, "a", FLOAT),
};

static const struct ws_field k_input_window_info[] = {
	F(1, "layout_params_flags", UINT32),
	F(2, "layout_params_type", INT32),
	M(3, "frame", RECT),
	M(4, "touchable_region", REGION),
	F(5, "surface_inset", INT32),
	F(6, "visible", BOOL),
	F(7, "can_receive_keys", BOOL),
	F(8, "focusable", BOOL),
	F(9, "has_wallpaper", BOOL),
	F(10, "global_scale_factor", FLOAT),
	F(11, "window_x_scale", FLOAT),
	F(12, "window_y_scale", FLOAT),
	F(13, "crop_layer_id", INT32),
	F(14, "replace_touchable_region_with_crop", BOOL),
	M(15, "touchable_region_crop", RECT),
	M(16, "transform", TRANSFORM),
	F(17, "input_config", UINT32),
};

static const struct ws_field k_blur_region[] = {
	F(1, "blur_radius", UINT32),
	F(2, "corner_radius_tl", UINT32),
	F(3, "corner_radius_tr", UINT32),
	F(4, "corner_radius_bl", UINT32),
	F(5, "corner_radius_br", FLOAT),
	F(6, "alpha", FLOAT),
	F(7, "left", INT32),
	F(8, "top", INT32),
	F(9, "right", INT32),
	F(10, "bottom", INT32),
	F(11, "corner_radius_tlx", FLOAT),
	F(12, "corner_radius_tly", FLOAT),
	F(13, "corner_radius_trx", FLOAT),
	F(14, "corner_radius_try", FLOAT),
	F(15, "corner_radius_blx", FLOAT),
	F(16, "corner_radius_bly", FLOAT),
	F(17, "corner_radius_brx", FLOAT),
	F(18, "corner_radius_bry", FLOAT),
};

static const struct ws_field k_color_transform[] = {
	R(1, "val", FLOAT),
};

static const struct ws_field k_box_shadow_settings[] = {
	RM(1, "box_shadows", BOX_SHADOW_PARAMS),
};

static const struct ws_field k_box_shadow_params[] = {
	F(1, "blur_radius", FLOAT),
	F(2, "spread_radius", FLOAT),
	F(3, "color", INT32),
	F(4, "offset_x", FLOAT),
	F(5, "offset_y", FLOAT),
};

static const struct ws_field k_border_settings[] = {
	F(1, "stroke_width", FLOAT),
	F(2, "color", INT32),
};

static const struct ws_field k_rect[] = {
	F(1, "left", INT32),
	F(2, "top", INT32),
	F(3, "right", INT32),
	F(4, "bottom", INT32),
};

static const struct ws_field k_corner_radii[] = {
	F(1, "tl", FLOAT),
	F(2, "tr", FLOAT),
	F(3, "bl", FLOAT),
	F(4, "br", FLOAT),
};

#define MSG(id, fields) [WS_MSG_##id] = {fields, N(fields)}
const struct ws_message ws_messages[WS_MSG_COUNT] = {
	MSG(LAYERS_SNAPSHOT, k_snapshot),
	MSG(LAYERS, k_layers),
	MSG(DISPLAY, k_display),
	MSG(LAYER, k_layer),
	MSG(POSITION, k_position),
	MSG(FLOAT_RECT, k_float_rect),
	MSG(ACTIVE_BUFFER, k_active_buffer),
	MSG(BARRIER_LAYER, k_barrier_layer),
	MSG(METADATA_ENTRY, k_metadata_entry),
	MSG(REGION, k_region),
	MSG(SIZE, k_size),
	MSG(TRANSFORM, k_transform),
	MSG(COLOR, k_color),
	MSG(INPUT_WINDOW_INFO, k_input_window_info),
	MSG(BLUR_REGION, k_blur_region),
	MSG(COLOR_TRANSFORM, k_color_transform),
	MSG(BOX_SHADOW_SETTINGS, k_box_shadow_settings),
	MSG(BOX_SHADOW_PARAMS, k_box_shadow_params),
	MSG(BORDER_SETTINGS, k_border_settings),
	MSG(RECT, k_rect),
	MSG(CORNER_RADII, k_corner_radii),
};

static const char *const k_hwc_composition_type[] = {
	"HWC_TYPE_UNSPECIFIED", "HWC_TYPE_CLIENT",   "HWC_TYPE_DEVICE",
	"HWC_TYPE_SOLID_COLOR", "HWC_TYPE_CURSOR",   "HWC_TYPE_SIDEBAND",
	"HWC_TYPE_DISPLAY_DECORATION",
};

static const char *const k_trusted_overlay[] = {"UNSET", "DISABLED", "ENABLED"};

/* Both enums number their values 0, 1, 2, ... */
const struct ws_enum ws_enums[WS_ENUM_COUNT] = {
	[WS_ENUM_HWC_COMPOSITION_TYPE] = {k_hwc_composition_type, N(k_hwc_composition_type)},
	[WS_ENUM_TRUSTED_OVERLAY] = {k_trusted_overlay, N(k_trusted_overlay)},
};

const uint32_t ws_snapshot_arg_fields[7] = {1, 2, 4, 5, 6, 7, 8};
