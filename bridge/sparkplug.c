/* SPDX-License-Identifier: MIT */
/*
 * sparkplug.c: the Sparkplug B 3.0 mode's encoder and decoders
 * (docs/fleet.md, "Sparkplug B"): every Sparkplug topic and payload
 * pbus-bridge publishes or reads is made or read here, and nowhere else.
 * Payloads are the protobuf of bridge/sparkplug_b.proto, compiled by
 * protoc-c into the build tree, packed and unpacked by libprotobuf-c.
 *
 * The schema is fixed for a session, so the metrics are built once, when
 * bridge_spb_prepare() is given the parameters (pbusd's schema): each
 * metric's protobuf struct, its properties and the storage of its value
 * (the parameter's capacity). A new value is copied into that storage; a
 * message points the payload at the prebuilt metrics it carries and is
 * packed into one buffer that only grows. So publishing a value allocates
 * nothing.
 *
 * The sequence number lives here: NBIRTH sets it to 0, and every DBIRTH,
 * DDATA and DDEATH after it takes the next one, 255 wrapping to 0. bdSeq
 * is the caller's (it belongs to the MQTT session: main.c).
 *
 * Decoding (NCMD, DCMD, the primary host's STATE) never trusts its input:
 * a payload is refused with a one-line reason, a metric of a DCMD with its
 * own reason; tests/fuzz/fuzz-bridge.c runs both.
 *
 * One thread per struct bridge_spb (main.c's main thread); the decoders of
 * STATE keep no state and may run on any thread.
 */
#include "pbus-bridge.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <parambus/common.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sparkplug_b.pb-c.h"

#define NAMESPACE "spBv1.0"
#define PAYLOAD_MAX (16u * 1024 * 1024) /* bytes of an NCMD/DCMD payload */
#define COMMAND_METRICS_MAX 1024        /* metrics of one NCMD/DCMD */
#define REBIRTH_METRIC "Node Control/Rebirth"
#define BDSEQ_METRIC "bdSeq"

/* Sparkplug's DataType numbers (sparkplug_b.proto's enum) */
enum {
	DT_INT8 = 1, DT_INT16 = 2, DT_INT32 = 3, DT_INT64 = 4, DT_UINT8 = 5, DT_UINT16 = 6, DT_UINT32 = 7,
	DT_UINT64 = 8, DT_FLOAT = 9, DT_DOUBLE = 10, DT_BOOLEAN = 11, DT_STRING = 12, DT_BYTES = 17,
	DT_INT8_ARRAY = 22, DT_BOOLEAN_ARRAY = 32
};

/* The Quality property's codes (Sparkplug 3.0 §6.4.7) */
enum { QUALITY_BAD = 0, QUALITY_GOOD = 192 };

/* The properties of a metric in a birth, in this order; DATA messages
 * carry the last two when the status changed. */
enum { PROP_UNIT, PROP_WRITABLE, PROP_QUALITY, PROP_STATUS, PROP_COUNT };
static char *const property_keys[PROP_COUNT] = {"engUnit", "writable", "Quality", "alarmStatus"};

struct spb_metric {
	Spb__Payload__Metric m;
	Spb__Payload__PropertySet birth_props, status_props;
	Spb__Payload__PropertyValue values[PROP_COUNT];
	Spb__Payload__PropertyValue *value_ptrs[PROP_COUNT];
	char *name, *unit;
	unsigned type;                /* enum pbus_type */
	uint32_t datatype;
	uint8_t *storage;             /* the value: strings NUL-terminated */
	size_t capacity;
	bool has_value, status_sent;
	uint32_t status, sent_status;
};

struct bridge_spb {
	char *group, *node, *device, *host;
	char *t_nbirth, *t_ndeath, *t_dbirth, *t_ddata, *t_ddeath, *t_ncmd, *t_dcmd, *t_state;
	char *f_ncmd, *f_dcmd;
	struct spb_metric *metrics;
	size_t count;
	Spb__Payload__Metric **ptrs;  /* [count + 2]: a message's metrics */
	Spb__Payload__Metric bdseq, rebirth;
	uint8_t *out;
	size_t out_capacity;
	unsigned seq;                 /* the last one sent */
};

/* A Sparkplug ID (group, edge node, device, host): UTF-8 without the
 * MQTT topic's special characters (Sparkplug 3.0 §4.1.1). */
bool bridge_spb_id_ok(const char *id)
{
	if (!id || !*id || strlen(id) > 128)
		return false;
	for (const char *p = id; *p; p++)
		if (*p == '/' || *p == '+' || *p == '#' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

static char *topic(const char *group, const char *verb, const char *node, const char *device)
{
	char *t = NULL;
	if (asprintf(&t, NAMESPACE "/%s/%s/%s%s%s", group, verb, node, device ? "/" : "", device ? device : "") < 0)
		return NULL;
	return t;
}

static void free_metrics(struct bridge_spb *s)
{
	for (size_t i = 0; i < s->count; i++) {
		free(s->metrics[i].name);
		free(s->metrics[i].unit);
		free(s->metrics[i].storage);
	}
	free(s->metrics);
	free(s->ptrs);
	s->metrics = NULL;
	s->ptrs = NULL;
	s->count = 0;
}

void bridge_spb_free(struct bridge_spb *s)
{
	if (!s)
		return;
	free_metrics(s);
	char **strings[] = {&s->group, &s->node, &s->device, &s->host, &s->t_nbirth, &s->t_ndeath, &s->t_dbirth,
			    &s->t_ddata, &s->t_ddeath, &s->t_ncmd, &s->t_dcmd, &s->t_state, &s->f_ncmd, &s->f_dcmd};
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		free(*strings[i]);
	free(s->out);
	free(s);
}

int bridge_spb_new(const char *group, const char *node, const char *device, const char *host,
		   struct bridge_spb **ret)
{
	if (!bridge_spb_id_ok(group) || !bridge_spb_id_ok(node) || !bridge_spb_id_ok(device) ||
	    (host && !bridge_spb_id_ok(host)))
		return -EINVAL;
	struct bridge_spb *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->group = strdup(group);
	s->node = strdup(node);
	s->device = strdup(device);
	s->host = host ? strdup(host) : NULL;
	s->t_nbirth = topic(group, "NBIRTH", node, NULL);
	s->t_ndeath = topic(group, "NDEATH", node, NULL);
	s->t_dbirth = topic(group, "DBIRTH", node, device);
	s->t_ddata = topic(group, "DDATA", node, device);
	s->t_ddeath = topic(group, "DDEATH", node, device);
	s->t_ncmd = topic(group, "NCMD", node, NULL);
	s->t_dcmd = topic(group, "DCMD", node, device);
	s->f_ncmd = topic(group, "NCMD", node, "#");
	s->f_dcmd = topic(group, "DCMD", node, "#");
	if (host && asprintf(&s->t_state, NAMESPACE "/STATE/%s", host) < 0)
		s->t_state = NULL;
	if (!s->group || !s->node || !s->device || (host && (!s->host || !s->t_state)) || !s->t_nbirth ||
	    !s->t_ndeath || !s->t_dbirth || !s->t_ddata || !s->t_ddeath || !s->t_ncmd || !s->t_dcmd || !s->f_ncmd ||
	    !s->f_dcmd) {
		bridge_spb_free(s);
		return -ENOMEM;
	}
	spb__payload__metric__init(&s->bdseq);
	s->bdseq.name = BDSEQ_METRIC;
	s->bdseq.has_datatype = true;
	s->bdseq.datatype = DT_INT64;
	s->bdseq.value_case = SPB__PAYLOAD__METRIC__VALUE_LONG_VALUE;
	spb__payload__metric__init(&s->rebirth);
	s->rebirth.name = REBIRTH_METRIC;
	s->rebirth.has_datatype = true;
	s->rebirth.datatype = DT_BOOLEAN;
	s->rebirth.value_case = SPB__PAYLOAD__METRIC__VALUE_BOOLEAN_VALUE;
	s->rebirth.boolean_value = false;
	*ret = s;
	return 0;
}

const char *bridge_spb_topic(const struct bridge_spb *s, enum bridge_spb_topic which)
{
	switch (which) {
	case BRIDGE_SPB_NCMD_FILTER: return s->f_ncmd;
	case BRIDGE_SPB_DCMD_FILTER: return s->f_dcmd;
	case BRIDGE_SPB_STATE: return s->t_state;
	case BRIDGE_SPB_NDEATH: return s->t_ndeath;
	default: return NULL;
	}
}

/* ------------------------------------------------------------ datatypes */

uint32_t bridge_spb_datatype(unsigned type)
{
	unsigned element = type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
	static const uint8_t scalar[] = {
		[PBUS_TYPE_BOOL] = DT_BOOLEAN, [PBUS_TYPE_INT8] = DT_INT8, [PBUS_TYPE_INT16] = DT_INT16,
		[PBUS_TYPE_INT32] = DT_INT32, [PBUS_TYPE_INT64] = DT_INT64, [PBUS_TYPE_UINT8] = DT_UINT8,
		[PBUS_TYPE_UINT16] = DT_UINT16, [PBUS_TYPE_UINT32] = DT_UINT32, [PBUS_TYPE_UINT64] = DT_UINT64,
		[PBUS_TYPE_FLOAT] = DT_FLOAT, [PBUS_TYPE_DOUBLE] = DT_DOUBLE, [PBUS_TYPE_STRING] = DT_STRING,
		[PBUS_TYPE_BYTES] = DT_BYTES, [PBUS_TYPE_ENUM] = DT_STRING,
	};
	if (element == 0 || element >= sizeof(scalar) || !scalar[element])
		return 0;
	if (!(type & PBUS_TYPE_ARRAY_FLAG))
		return scalar[element];
	if (element == PBUS_TYPE_BOOL)
		return DT_BOOLEAN_ARRAY;
	if (element > PBUS_TYPE_DOUBLE)
		return 0; /* no array of string, bytes or enum exists */
	/* Int8Array 22 ... DoubleArray 31 follow Int8 1 ... Double 10 */
	return scalar[element] - DT_INT8 + DT_INT8_ARRAY;
}

static size_t element_size(unsigned type)
{
	switch (type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG) {
	case PBUS_TYPE_BOOL: case PBUS_TYPE_INT8: case PBUS_TYPE_UINT8: return 1;
	case PBUS_TYPE_INT16: case PBUS_TYPE_UINT16: return 2;
	case PBUS_TYPE_INT32: case PBUS_TYPE_UINT32: case PBUS_TYPE_FLOAT: case PBUS_TYPE_ENUM: return 4;
	case PBUS_TYPE_INT64: case PBUS_TYPE_UINT64: case PBUS_TYPE_DOUBLE: return 8;
	default: return 1;
	}
}

static void set_property_string(Spb__Payload__PropertyValue *v, char *text)
{
	spb__payload__property_value__init(v);
	v->has_type = true;
	v->type = DT_STRING;
	v->value_case = SPB__PAYLOAD__PROPERTY_VALUE__VALUE_STRING_VALUE;
	v->string_value = text;
}

int bridge_spb_prepare(struct bridge_spb *s, const struct bridge_spb_metric_def *defs, size_t count)
{
	free_metrics(s);
	s->metrics = calloc(count ? count : 1, sizeof(*s->metrics));
	s->ptrs = calloc(count + 2, sizeof(*s->ptrs));
	if (!s->metrics || !s->ptrs) {
		free_metrics(s);
		return -ENOMEM;
	}
	s->count = count;
	for (size_t i = 0; i < count; i++) {
		struct spb_metric *x = &s->metrics[i];
		const struct bridge_spb_metric_def *d = &defs[i];
		x->type = d->type;
		x->datatype = bridge_spb_datatype(d->type);
		if (!x->datatype) {
			free_metrics(s);
			return -EINVAL;
		}
		/* the value's storage: a string and a label with their NUL, a
		 * Boolean array with its count and one bit per element */
		unsigned element = d->type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
		if (element == PBUS_TYPE_ENUM)
			x->capacity = d->label_max + 1;
		else if (d->type == (PBUS_TYPE_BOOL | PBUS_TYPE_ARRAY_FLAG))
			x->capacity = 4 + (d->value_size + 7) / 8;
		else
			x->capacity = d->value_size + 1;
		x->name = strdup(d->name);
		x->unit = strdup(d->unit ? d->unit : "");
		x->storage = calloc(1, x->capacity);
		if (!x->name || !x->unit || !x->storage) {
			s->count = i + 1;
			free_metrics(s);
			return -ENOMEM;
		}
		spb__payload__metric__init(&x->m);
		x->m.has_alias = true;
		x->m.alias = (uint64_t)i + 1; /* 0 is left out: some hosts read it as "no alias" */
		x->m.has_timestamp = true;
		/* properties: the unit, whether DCMD may write it, the quality and
		 * parambus's alarm status */
		set_property_string(&x->values[PROP_UNIT], x->unit);
		spb__payload__property_value__init(&x->values[PROP_WRITABLE]);
		x->values[PROP_WRITABLE].has_type = true;
		x->values[PROP_WRITABLE].type = DT_BOOLEAN;
		x->values[PROP_WRITABLE].value_case = SPB__PAYLOAD__PROPERTY_VALUE__VALUE_BOOLEAN_VALUE;
		x->values[PROP_WRITABLE].boolean_value = d->writable;
		spb__payload__property_value__init(&x->values[PROP_QUALITY]);
		x->values[PROP_QUALITY].has_type = true;
		x->values[PROP_QUALITY].type = DT_INT32;
		x->values[PROP_QUALITY].value_case = SPB__PAYLOAD__PROPERTY_VALUE__VALUE_INT_VALUE;
		set_property_string(&x->values[PROP_STATUS], (char *)bridge_status_name(3));
		for (int k = 0; k < PROP_COUNT; k++)
			x->value_ptrs[k] = &x->values[k];
		spb__payload__property_set__init(&x->birth_props);
		x->birth_props.n_keys = x->birth_props.n_values = PROP_COUNT;
		x->birth_props.keys = (char **)property_keys;
		x->birth_props.values = x->value_ptrs;
		spb__payload__property_set__init(&x->status_props);
		x->status_props.n_keys = x->status_props.n_values = 2;
		x->status_props.keys = (char **)property_keys + PROP_QUALITY;
		x->status_props.values = x->value_ptrs + PROP_QUALITY;
		x->status = 3;
	}
	return 0;
}

int bridge_spb_set_value(struct bridge_spb *s, size_t i, const void *raw, size_t length, const char *label,
			 uint32_t status, uint64_t timestamp_ns)
{
	if (i >= s->count)
		return -EINVAL;
	struct spb_metric *x = &s->metrics[i];
	Spb__Payload__Metric *m = &x->m;
	const uint8_t *p = raw;
	unsigned element = x->type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
	size_t esize = element_size(x->type);
	if (!(x->type & PBUS_TYPE_ARRAY_FLAG) && element != PBUS_TYPE_STRING && element != PBUS_TYPE_BYTES &&
	    length != esize)
		return -EINVAL;
	if ((x->type & PBUS_TYPE_ARRAY_FLAG) && length % esize)
		return -EINVAL;
	int8_t i8;
	int16_t i16;
	int32_t i32;
	uint16_t u16;
	uint32_t u32;
	float f;
	if (x->type & PBUS_TYPE_ARRAY_FLAG) {
		m->value_case = SPB__PAYLOAD__METRIC__VALUE_BYTES_VALUE;
		if (element == PBUS_TYPE_BOOL) {
			/* a 4-byte little-endian count, then the values' bits, the
			 * first the highest bit of the first byte */
			if (4 + (length + 7) / 8 > x->capacity)
				return -EMSGSIZE;
			uint32_t n = (uint32_t)length;
			for (int b = 0; b < 4; b++)
				x->storage[b] = (uint8_t)(n >> (8 * b));
			memset(x->storage + 4, 0, (length + 7) / 8);
			for (size_t k = 0; k < length; k++)
				if (p[k])
					x->storage[4 + k / 8] |= (uint8_t)(0x80u >> (k % 8));
			m->bytes_value.len = 4 + (length + 7) / 8;
		} else {
			/* the stored encoding is Sparkplug's: packed little-endian */
			if (length > x->capacity)
				return -EMSGSIZE;
			memcpy(x->storage, p, length);
			m->bytes_value.len = length;
		}
		m->bytes_value.data = x->storage;
	} else {
		switch (element) {
		case PBUS_TYPE_BOOL:
			m->value_case = SPB__PAYLOAD__METRIC__VALUE_BOOLEAN_VALUE;
			m->boolean_value = p[0] != 0;
			break;
		case PBUS_TYPE_INT8: case PBUS_TYPE_INT16: case PBUS_TYPE_INT32:
			/* Sparkplug: the two's complement in the uint32 */
			m->value_case = SPB__PAYLOAD__METRIC__VALUE_INT_VALUE;
			if (element == PBUS_TYPE_INT8) {
				memcpy(&i8, p, 1);
				i32 = i8;
			} else if (element == PBUS_TYPE_INT16) {
				memcpy(&i16, p, 2);
				i32 = i16;
			} else {
				memcpy(&i32, p, 4);
			}
			m->int_value = (uint32_t)i32;
			break;
		case PBUS_TYPE_UINT8: case PBUS_TYPE_UINT16: case PBUS_TYPE_UINT32:
			m->value_case = SPB__PAYLOAD__METRIC__VALUE_INT_VALUE;
			if (element == PBUS_TYPE_UINT8) {
				u32 = p[0];
			} else if (element == PBUS_TYPE_UINT16) {
				memcpy(&u16, p, 2);
				u32 = u16;
			} else {
				memcpy(&u32, p, 4);
			}
			m->int_value = u32;
			break;
		case PBUS_TYPE_INT64: case PBUS_TYPE_UINT64:
			m->value_case = SPB__PAYLOAD__METRIC__VALUE_LONG_VALUE;
			memcpy(&m->long_value, p, 8);
			break;
		case PBUS_TYPE_FLOAT:
			m->value_case = SPB__PAYLOAD__METRIC__VALUE_FLOAT_VALUE;
			memcpy(&f, p, 4);
			m->float_value = f;
			break;
		case PBUS_TYPE_DOUBLE:
			m->value_case = SPB__PAYLOAD__METRIC__VALUE_DOUBLE_VALUE;
			memcpy(&m->double_value, p, 8);
			break;
		case PBUS_TYPE_STRING:
		case PBUS_TYPE_ENUM: {
			const char *text = element == PBUS_TYPE_ENUM ? label : (const char *)p;
			size_t n = element == PBUS_TYPE_ENUM ? (label ? strlen(label) : 0) : length;
			if (element == PBUS_TYPE_ENUM && !label)
				return -EINVAL;
			if (n + 1 > x->capacity)
				return -EMSGSIZE;
			memcpy(x->storage, text, n);
			x->storage[n] = '\0';
			m->value_case = SPB__PAYLOAD__METRIC__VALUE_STRING_VALUE;
			m->string_value = (char *)x->storage;
			break;
		}
		case PBUS_TYPE_BYTES:
			if (length > x->capacity)
				return -EMSGSIZE;
			memcpy(x->storage, p, length);
			m->value_case = SPB__PAYLOAD__METRIC__VALUE_BYTES_VALUE;
			m->bytes_value.data = x->storage;
			m->bytes_value.len = length;
			break;
		default:
			return -EINVAL;
		}
	}
	m->timestamp = timestamp_ns / 1000000u;
	x->status = status < 4 ? status : 3;
	x->values[PROP_QUALITY].int_value = x->status == 3 ? QUALITY_BAD : QUALITY_GOOD;
	x->values[PROP_STATUS].string_value = (char *)bridge_status_name(x->status);
	x->has_value = true;
	return 0;
}

/* ------------------------------------------------------------ messages */

/* Pack @payload into s->out (grown when too small: the buffer is reused). */
static int pack(struct bridge_spb *s, Spb__Payload *payload, const char *t, int qos,
		struct bridge_spb_message *ret)
{
	size_t n = spb__payload__get_packed_size(payload);
	if (n > s->out_capacity) {
		size_t capacity = s->out_capacity ? s->out_capacity : 1024;
		while (capacity < n)
			capacity *= 2;
		uint8_t *grown = realloc(s->out, capacity);
		if (!grown)
			return -ENOMEM;
		s->out = grown;
		s->out_capacity = capacity;
	}
	size_t packed = spb__payload__pack(payload, s->out);
	*ret = (struct bridge_spb_message){.topic = t, .payload = s->out, .length = packed, .qos = qos,
					   .retain = false};
	return 0;
}

static void payload_start(Spb__Payload *payload, uint64_t now_ms, bool with_seq, unsigned seq)
{
	spb__payload__init(payload);
	payload->has_timestamp = true;
	payload->timestamp = now_ms;
	payload->has_seq = with_seq;
	payload->seq = seq;
}

int bridge_spb_nbirth(struct bridge_spb *s, uint64_t bdseq, uint64_t now_ms, struct bridge_spb_message *ret)
{
	Spb__Payload payload;
	s->seq = 0;
	payload_start(&payload, now_ms, true, 0);
	s->bdseq.long_value = bdseq;
	s->bdseq.has_timestamp = s->rebirth.has_timestamp = true;
	s->bdseq.timestamp = s->rebirth.timestamp = now_ms;
	s->ptrs[0] = &s->bdseq;
	s->ptrs[1] = &s->rebirth; /* no alias: a host must find it by name (3.0 §5.x) */
	payload.n_metrics = 2;
	payload.metrics = s->ptrs;
	return pack(s, &payload, s->t_nbirth, 0, ret);
}

int bridge_spb_ndeath(struct bridge_spb *s, uint64_t bdseq, uint64_t now_ms, struct bridge_spb_message *ret)
{
	Spb__Payload payload;
	payload_start(&payload, now_ms, false, 0);
	s->bdseq.long_value = bdseq;
	s->bdseq.has_timestamp = false;
	s->ptrs[0] = &s->bdseq;
	payload.n_metrics = 1;
	payload.metrics = s->ptrs;
	/* the will: QoS 1, not retained (3.0 §5.x, the Will Message rules) */
	return pack(s, &payload, s->t_ndeath, 1, ret);
}

static unsigned next_seq(struct bridge_spb *s)
{
	s->seq = (s->seq + 1) & 0xff;
	return s->seq;
}

int bridge_spb_dbirth(struct bridge_spb *s, uint64_t now_ms, struct bridge_spb_message *ret)
{
	Spb__Payload payload;
	payload_start(&payload, now_ms, true, next_seq(s));
	for (size_t i = 0; i < s->count; i++) {
		struct spb_metric *x = &s->metrics[i];
		x->m.name = x->name;
		x->m.has_datatype = true;
		x->m.datatype = x->datatype;
		x->m.properties = &x->birth_props;
		x->m.has_is_null = !x->has_value;
		x->m.is_null = !x->has_value;
		if (!x->has_value) {
			x->m.value_case = SPB__PAYLOAD__METRIC__VALUE__NOT_SET;
			x->m.timestamp = now_ms;
		}
		x->sent_status = x->status;
		x->status_sent = true;
		s->ptrs[i] = &x->m;
	}
	payload.n_metrics = s->count;
	payload.metrics = s->ptrs;
	int r = pack(s, &payload, s->t_dbirth, 0, ret);
	/* DATA messages name metrics by alias alone */
	for (size_t i = 0; i < s->count; i++) {
		s->metrics[i].m.name = NULL;
		s->metrics[i].m.has_datatype = false;
		s->metrics[i].m.properties = NULL;
		s->metrics[i].m.has_is_null = false;
	}
	return r;
}

int bridge_spb_ddata(struct bridge_spb *s, const size_t *which, size_t n, uint64_t now_ms,
		     struct bridge_spb_message *ret)
{
	Spb__Payload payload;
	size_t k = 0;
	for (size_t j = 0; j < n; j++) {
		if (which[j] >= s->count || !s->metrics[which[j]].has_value)
			continue;
		struct spb_metric *x = &s->metrics[which[j]];
		/* the quality and the alarm status go along when they changed */
		x->m.properties = x->status != x->sent_status ? &x->status_props : NULL;
		x->sent_status = x->status;
		s->ptrs[k++] = &x->m;
	}
	if (k == 0)
		return -ENODATA;
	payload_start(&payload, now_ms, true, next_seq(s));
	payload.n_metrics = k;
	payload.metrics = s->ptrs;
	int r = pack(s, &payload, s->t_ddata, 0, ret);
	for (size_t j = 0; j < k; j++)
		s->ptrs[j]->properties = NULL;
	return r;
}

int bridge_spb_ddeath(struct bridge_spb *s, uint64_t now_ms, struct bridge_spb_message *ret)
{
	Spb__Payload payload;
	payload_start(&payload, now_ms, true, next_seq(s));
	return pack(s, &payload, s->t_ddeath, 0, ret);
}

/* ------------------------------------------------------------ decoders */

enum bridge_spb_topic bridge_spb_topic_kind(const struct bridge_spb *s, const char *t)
{
	if (strcmp(t, s->t_ncmd) == 0)
		return BRIDGE_SPB_NCMD;
	if (strcmp(t, s->t_dcmd) == 0)
		return BRIDGE_SPB_DCMD;
	if (s->t_state && strcmp(t, s->t_state) == 0)
		return BRIDGE_SPB_STATE;
	return BRIDGE_SPB_OTHER;
}

size_t bridge_spb_metric_by_alias(const struct bridge_spb *s, uint64_t alias)
{
	return alias >= 1 && alias <= s->count ? (size_t)(alias - 1) : SIZE_MAX;
}

static size_t metric_by_name(const struct bridge_spb *s, const char *name)
{
	for (size_t i = 0; i < s->count; i++)
		if (strcmp(s->metrics[i].name, name) == 0)
			return i;
	return SIZE_MAX;
}

static const char *value_case_name(Spb__Payload__Metric__ValueCase c)
{
	switch (c) {
	case SPB__PAYLOAD__METRIC__VALUE_INT_VALUE: return "int_value";
	case SPB__PAYLOAD__METRIC__VALUE_LONG_VALUE: return "long_value";
	case SPB__PAYLOAD__METRIC__VALUE_FLOAT_VALUE: return "float_value";
	case SPB__PAYLOAD__METRIC__VALUE_DOUBLE_VALUE: return "double_value";
	case SPB__PAYLOAD__METRIC__VALUE_BOOLEAN_VALUE: return "boolean_value";
	case SPB__PAYLOAD__METRIC__VALUE_STRING_VALUE: return "string_value";
	case SPB__PAYLOAD__METRIC__VALUE_BYTES_VALUE: return "bytes_value";
	case SPB__PAYLOAD__METRIC__VALUE__NOT_SET: return "no value";
	default: return "a dataset, template or extension";
	}
}

/* A growing text for a value. */
struct text {
	char *s;
	size_t n, capacity;
};

static bool text_add(struct text *t, const char *format, ...)
{
	char item[64];
	va_list ap;
	va_start(ap, format);
	int n = vsnprintf(item, sizeof(item), format, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(item) || t->n + (size_t)n + 1 > BRIDGE_VALUE_TEXT_MAX)
		return false;
	if (t->n + (size_t)n + 1 > t->capacity) {
		size_t capacity = t->capacity ? t->capacity * 2 : 64;
		while (capacity < t->n + (size_t)n + 1)
			capacity *= 2;
		char *grown = realloc(t->s, capacity);
		if (!grown)
			return false;
		t->s = grown;
		t->capacity = capacity;
	}
	memcpy(t->s + t->n, item, (size_t)n + 1);
	t->n += (size_t)n;
	return true;
}

/* One element of type @element at @p as text (for `pbus set`). */
static bool element_text(struct text *t, unsigned element, const uint8_t *p)
{
	int8_t i8;
	int16_t i16;
	int32_t i32;
	int64_t i64;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	float f;
	double d;
	switch (element) {
	case PBUS_TYPE_BOOL: return text_add(t, "%s", p[0] ? "true" : "false");
	case PBUS_TYPE_INT8: memcpy(&i8, p, 1); return text_add(t, "%d", i8);
	case PBUS_TYPE_INT16: memcpy(&i16, p, 2); return text_add(t, "%d", i16);
	case PBUS_TYPE_INT32: memcpy(&i32, p, 4); return text_add(t, "%" PRId32, i32);
	case PBUS_TYPE_INT64: memcpy(&i64, p, 8); return text_add(t, "%" PRId64, i64);
	case PBUS_TYPE_UINT8: return text_add(t, "%u", p[0]);
	case PBUS_TYPE_UINT16: memcpy(&u16, p, 2); return text_add(t, "%u", u16);
	case PBUS_TYPE_UINT32: memcpy(&u32, p, 4); return text_add(t, "%" PRIu32, u32);
	case PBUS_TYPE_UINT64: memcpy(&u64, p, 8); return text_add(t, "%" PRIu64, u64);
	case PBUS_TYPE_FLOAT: memcpy(&f, p, 4); return text_add(t, "%.9g", (double)f);
	case PBUS_TYPE_DOUBLE: memcpy(&d, p, 8); return text_add(t, "%.17g", d);
	default: return false;
	}
}

/* The value of DCMD metric @m for metric @x, as the text `pbus set` reads,
 * into *ret (malloc'd); 0 or -EINVAL with the reason. */
static int metric_text(const struct spb_metric *x, const Spb__Payload__Metric *m, char **ret, char *error,
		       size_t size)
{
	unsigned element = x->type & ~(unsigned)PBUS_TYPE_ARRAY_FLAG;
	bool array = x->type & PBUS_TYPE_ARRAY_FLAG;
	Spb__Payload__Metric__ValueCase want;
	if (array || element == PBUS_TYPE_BYTES)
		want = SPB__PAYLOAD__METRIC__VALUE_BYTES_VALUE;
	else if (element == PBUS_TYPE_STRING || element == PBUS_TYPE_ENUM)
		want = SPB__PAYLOAD__METRIC__VALUE_STRING_VALUE;
	else if (element == PBUS_TYPE_BOOL)
		want = SPB__PAYLOAD__METRIC__VALUE_BOOLEAN_VALUE;
	else if (element == PBUS_TYPE_INT64 || element == PBUS_TYPE_UINT64)
		want = SPB__PAYLOAD__METRIC__VALUE_LONG_VALUE;
	else if (element == PBUS_TYPE_FLOAT)
		want = SPB__PAYLOAD__METRIC__VALUE_FLOAT_VALUE;
	else if (element == PBUS_TYPE_DOUBLE)
		want = SPB__PAYLOAD__METRIC__VALUE_DOUBLE_VALUE;
	else
		want = SPB__PAYLOAD__METRIC__VALUE_INT_VALUE;
	/* a float for a double and the other way round are taken: hosts differ */
	bool floating = (want == SPB__PAYLOAD__METRIC__VALUE_FLOAT_VALUE ||
			 want == SPB__PAYLOAD__METRIC__VALUE_DOUBLE_VALUE) &&
			(m->value_case == SPB__PAYLOAD__METRIC__VALUE_FLOAT_VALUE ||
			 m->value_case == SPB__PAYLOAD__METRIC__VALUE_DOUBLE_VALUE);
	if (m->has_is_null && m->is_null)
		return bridge_refuse(error, size, "metric '%s': a null value cannot be written", x->name);
	if (m->value_case != want && !floating)
		return bridge_refuse(error, size, "metric '%s' (datatype %" PRIu32 "): %s where %s is expected", x->name,
			    x->datatype, value_case_name(m->value_case), value_case_name(want));
	if (m->has_datatype && m->datatype != x->datatype)
		return bridge_refuse(error, size, "metric '%s': datatype %" PRIu32 ", but its birth said %" PRIu32, x->name,
			    m->datatype, x->datatype);
	struct text t = {0};
	bool ok = true;
	uint8_t raw[8];
	switch (m->value_case) {
	case SPB__PAYLOAD__METRIC__VALUE_BOOLEAN_VALUE:
		ok = text_add(&t, "%s", m->boolean_value ? "true" : "false");
		break;
	case SPB__PAYLOAD__METRIC__VALUE_INT_VALUE: {
		/* Int8/16/32: the two's complement of the value; UInt8/16/32: the value */
		uint32_t v = m->int_value;
		if (element == PBUS_TYPE_INT8 || element == PBUS_TYPE_INT16 || element == PBUS_TYPE_INT32)
			ok = text_add(&t, "%" PRId32, (int32_t)v);
		else
			ok = text_add(&t, "%" PRIu32, v);
		break;
	}
	case SPB__PAYLOAD__METRIC__VALUE_LONG_VALUE:
		memcpy(raw, &m->long_value, 8);
		ok = element_text(&t, element, raw);
		break;
	case SPB__PAYLOAD__METRIC__VALUE_FLOAT_VALUE:
		ok = text_add(&t, "%.9g", (double)m->float_value);
		break;
	case SPB__PAYLOAD__METRIC__VALUE_DOUBLE_VALUE:
		ok = text_add(&t, "%.17g", m->double_value);
		break;
	case SPB__PAYLOAD__METRIC__VALUE_STRING_VALUE: {
		size_t n = strlen(m->string_value);
		if (n + 1 > BRIDGE_VALUE_TEXT_MAX)
			return bridge_refuse(error, size, "metric '%s': the string is longer than %d bytes", x->name,
				    BRIDGE_VALUE_TEXT_MAX - 1);
		t.s = strdup(m->string_value);
		ok = t.s != NULL;
		break;
	}
	case SPB__PAYLOAD__METRIC__VALUE_BYTES_VALUE: {
		const uint8_t *p = m->bytes_value.data;
		size_t n = m->bytes_value.len;
		if (!array) {
			if (n * 2 + 1 > BRIDGE_VALUE_TEXT_MAX)
				return bridge_refuse(error, size, "metric '%s': more than %d bytes", x->name,
					    BRIDGE_VALUE_TEXT_MAX / 2 - 1);
			for (size_t k = 0; ok && k < n; k++)
				ok = text_add(&t, "%02x", p[k]);
			if (ok && n == 0)
				ok = (t.s = strdup("")) != NULL;
		} else if (element == PBUS_TYPE_BOOL) {
			if (n < 4)
				return bridge_refuse(error, size, "metric '%s': a BooleanArray without its 4-byte count", x->name);
			uint32_t count = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
					 (uint32_t)p[3] << 24;
			if ((uint64_t)n - 4 != ((uint64_t)count + 7) / 8)
				return bridge_refuse(error, size, "metric '%s': a BooleanArray of %" PRIu32 " values in %zu bytes",
					    x->name, count, n - 4);
			for (uint32_t k = 0; ok && k < count; k++) {
				uint8_t bit = (p[4 + k / 8] >> (7 - k % 8)) & 1;
				ok = text_add(&t, "%s%s", k ? "," : "", bit ? "true" : "false");
			}
		} else {
			size_t esize = element_size(x->type);
			if (n % esize)
				return bridge_refuse(error, size, "metric '%s': %zu bytes are no whole number of %zu-byte elements",
					    x->name, n, esize);
			for (size_t k = 0; ok && k < n; k += esize) {
				if (k)
					ok = text_add(&t, ",");
				ok = ok && element_text(&t, element, p + k);
			}
		}
		if (ok && !t.s)
			ok = (t.s = strdup("")) != NULL;
		break;
	}
	default:
		ok = false;
	}
	if (!ok) {
		free(t.s);
		return bridge_refuse(error, size, "metric '%s': the value is longer than %d bytes as text", x->name,
			    BRIDGE_VALUE_TEXT_MAX);
	}
	*ret = t.s;
	return 0;
}

static uint64_t fnv1a(const char *text, uint64_t h)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		h = (h ^ *p) * 0x100000001b3u;
	return h;
}

void bridge_spb_command_fini(struct bridge_spb_command *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->count; i++)
		free(c->writes[i].text);
	free(c->writes);
	*c = (struct bridge_spb_command){0};
}

int bridge_spb_decode_command(const struct bridge_spb *s, enum bridge_spb_topic kind, const void *data,
			      size_t length, struct bridge_spb_command *ret, char *error, size_t size)
{
	*ret = (struct bridge_spb_command){0};
	const char *verb = kind == BRIDGE_SPB_NCMD ? "NCMD" : "DCMD";
	if (kind != BRIDGE_SPB_NCMD && kind != BRIDGE_SPB_DCMD)
		return bridge_refuse(error, size, "not a command topic");
	if (length > PAYLOAD_MAX)
		return bridge_refuse(error, size, "%s: a payload of %zu bytes (at most %u)", verb, length, PAYLOAD_MAX);
	Spb__Payload *payload = spb__payload__unpack(NULL, length, data);
	if (!payload)
		return bridge_refuse(error, size, "%s: not a Sparkplug B payload (protobuf)", verb);
	int r = 0;
	if (payload->has_seq) {
		r = bridge_refuse(error, size, "%s: a command carries no seq (Sparkplug 3.0 §6.4.x)", verb);
		goto out;
	}
	if (!payload->has_timestamp) {
		/* the payload timestamp is part of the key that makes a command
		 * applied once (docs/fleet.md) */
		r = bridge_refuse(error, size, "%s: no payload timestamp", verb);
		goto out;
	}
	if (payload->n_metrics == 0 || payload->n_metrics > COMMAND_METRICS_MAX) {
		r = bridge_refuse(error, size, "%s: %zu metrics (1 to %d)", verb, payload->n_metrics, COMMAND_METRICS_MAX);
		goto out;
	}
	ret->writes = calloc(payload->n_metrics, sizeof(*ret->writes));
	if (!ret->writes) {
		r = -ENOMEM;
		goto out;
	}
	ret->timestamp = payload->timestamp;
	for (size_t i = 0; i < payload->n_metrics; i++) {
		const Spb__Payload__Metric *m = payload->metrics[i];
		struct bridge_spb_write *w = &ret->writes[ret->count++];
		w->metric = SIZE_MAX;
		if (kind == BRIDGE_SPB_NCMD) {
			/* the node's one writable metric */
			if (m->name && strcmp(m->name, REBIRTH_METRIC) == 0) {
				if (m->value_case != SPB__PAYLOAD__METRIC__VALUE_BOOLEAN_VALUE)
					bridge_refuse(w->error, sizeof(w->error), "'%s' takes a Boolean", REBIRTH_METRIC);
				else
					ret->rebirth |= m->boolean_value;
			} else {
				bridge_refuse(w->error, sizeof(w->error), "NCMD metric '%.64s': the edge node has no such writable "
					   "metric (only '%s')", m->name ? m->name : "(by alias)", REBIRTH_METRIC);
			}
			continue;
		}
		size_t at = m->name ? metric_by_name(s, m->name) : SIZE_MAX;
		if (m->has_alias) {
			size_t by_alias = bridge_spb_metric_by_alias(s, m->alias);
			if (by_alias == SIZE_MAX || (m->name && at != by_alias)) {
				bridge_refuse(w->error, sizeof(w->error), "DCMD metric alias %" PRIu64 ": not a metric of device '%s'",
				     m->alias, s->device);
				continue;
			}
			at = by_alias;
		} else if (!m->name) {
			bridge_refuse(w->error, sizeof(w->error), "DCMD metric without alias or name");
			continue;
		} else if (at == SIZE_MAX) {
			bridge_refuse(w->error, sizeof(w->error), "DCMD metric '%.64s': not a metric of device '%s'", m->name,
			     s->device);
			continue;
		}
		w->metric = at;
		if (metric_text(&s->metrics[at], m, &w->text, w->error, sizeof(w->error)) < 0)
			continue;
		/* the key: the payload's and the metric's timestamps and the
		 * value's text (a hash of it); a host that sends the same command
		 * again sends the same three (docs/fleet.md) */
		snprintf(w->id, sizeof(w->id), "spb:%" PRIu64 ":%" PRIu64 ":%016" PRIx64, payload->timestamp,
			 m->has_timestamp ? m->timestamp : 0, fnv1a(w->text, 0xcbf29ce484222325u));
	}
out:
	spb__payload__free_unpacked(payload, NULL);
	if (r < 0)
		bridge_spb_command_fini(ret);
	return r;
}

int bridge_spb_decode_state(const void *data, size_t length, bool *ret_online, uint64_t *ret_timestamp, char *error,
			    size_t size)
{
	json_error_t jerr;
	json_t *root = json_loadb(data, length, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return bridge_refuse(error, size, "STATE: not JSON: %s", jerr.text);
	int r = 0;
	json_t *online = json_object_get(root, "online"), *ts = json_object_get(root, "timestamp");
	if (!json_is_object(root))
		r = bridge_refuse(error, size, "STATE: not a JSON object");
	else if (!json_is_boolean(online))
		r = bridge_refuse(error, size, "STATE: no Boolean \"online\"");
	else if (!json_is_integer(ts) || json_integer_value(ts) < 0)
		r = bridge_refuse(error, size, "STATE: no \"timestamp\" (milliseconds since the epoch, an integer >= 0)");
	if (r == 0) {
		*ret_online = json_is_true(online);
		*ret_timestamp = (uint64_t)json_integer_value(ts);
	}
	json_decref(root);
	return r;
}
