/* SPDX-License-Identifier: MIT */
/*
 * gpio.c - GPIO lines through the character device, uAPI v2.
 *
 * A chip is an open /dev/gpiochipN; a request is the line descriptor the
 * kernel hands back from GPIO_V2_GET_LINE_IOCTL.  The subtle part is the
 * encoding of per-line settings into struct gpio_v2_line_config: one default
 * flag set plus at most GPIO_V2_LINE_NUM_ATTRS_MAX attributes, each applying
 * to the lines whose bit is set in its mask -- and those bits index the
 * *request's* lines (0..num_lines-1 in request order), not the chip offsets.
 * Getting that wrong configures the wrong pins without any error, which is
 * why the encoder is a pure function with its own host tests.
 *
 * Output values travel in the request (an OUTPUT_VALUES attribute), so the
 * kernel sets direction and level in one step: no glitch at request time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw-internal.h"
#include "parambus/hw/gpio.h"

_Static_assert(sizeof(struct pbus_gpio_edge_event) == sizeof(struct gpio_v2_line_event),
	       "edge event layout must match the kernel's");
_Static_assert(offsetof(struct pbus_gpio_edge_event, timestamp_ns) ==
		       offsetof(struct gpio_v2_line_event, timestamp_ns) &&
		       offsetof(struct pbus_gpio_edge_event, type) == offsetof(struct gpio_v2_line_event, id) &&
		       offsetof(struct pbus_gpio_edge_event, offset) ==
			       offsetof(struct gpio_v2_line_event, offset) &&
		       offsetof(struct pbus_gpio_edge_event, seqno) ==
			       offsetof(struct gpio_v2_line_event, seqno) &&
		       offsetof(struct pbus_gpio_edge_event, line_seqno) ==
			       offsetof(struct gpio_v2_line_event, line_seqno),
	       "edge event field offsets must match the kernel's");
_Static_assert(PBUS_GPIO_REQUEST_LINES_MAX == GPIO_V2_LINES_MAX, "lines per request");
_Static_assert(PBUS_GPIO_NAME_SIZE == GPIO_MAX_NAME_SIZE, "name size");

#define DEFAULT_CONSUMER "parambus"

struct pbus_gpio_chip {
	int fd;
	struct pbus_gpio_chip_info info;
	char path[]; /* the path it was opened with */
};

struct pbus_gpio_request {
	int fd;
	uint32_t num_lines;
	uint64_t all_mask; /* bits 0..num_lines-1 */
	uint32_t offsets[GPIO_V2_LINES_MAX];
};

/* ---- encoding --------------------------------------------------------- */

int pbus_gpio_settings_to_flags(const struct pbus_gpio_line_settings *s, uint64_t *ret_flags)
{
	uint64_t flags = 0;

	switch (s->direction) {
	case PBUS_GPIO_DIRECTION_AS_IS: break;
	case PBUS_GPIO_DIRECTION_INPUT: flags |= GPIO_V2_LINE_FLAG_INPUT; break;
	case PBUS_GPIO_DIRECTION_OUTPUT: flags |= GPIO_V2_LINE_FLAG_OUTPUT; break;
	default: return -EINVAL;
	}
	const bool input = s->direction == PBUS_GPIO_DIRECTION_INPUT;
	const bool output = s->direction == PBUS_GPIO_DIRECTION_OUTPUT;

	if (s->active_low)
		flags |= GPIO_V2_LINE_FLAG_ACTIVE_LOW;

	switch (s->bias) {
	case PBUS_GPIO_BIAS_AS_IS: break;
	case PBUS_GPIO_BIAS_DISABLED: flags |= GPIO_V2_LINE_FLAG_BIAS_DISABLED; break;
	case PBUS_GPIO_BIAS_PULL_UP: flags |= GPIO_V2_LINE_FLAG_BIAS_PULL_UP; break;
	case PBUS_GPIO_BIAS_PULL_DOWN: flags |= GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN; break;
	default: return -EINVAL;
	}
	if (s->bias != PBUS_GPIO_BIAS_AS_IS && !input && !output)
		return -EINVAL; /* the kernel wants an explicit direction with a bias */

	switch (s->drive) {
	case PBUS_GPIO_DRIVE_PUSH_PULL: break;
	case PBUS_GPIO_DRIVE_OPEN_DRAIN: flags |= GPIO_V2_LINE_FLAG_OPEN_DRAIN; break;
	case PBUS_GPIO_DRIVE_OPEN_SOURCE: flags |= GPIO_V2_LINE_FLAG_OPEN_SOURCE; break;
	default: return -EINVAL;
	}
	if (s->drive != PBUS_GPIO_DRIVE_PUSH_PULL && !output)
		return -EINVAL;

	switch (s->edge) {
	case PBUS_GPIO_EDGE_NONE: break;
	case PBUS_GPIO_EDGE_RISING: flags |= GPIO_V2_LINE_FLAG_EDGE_RISING; break;
	case PBUS_GPIO_EDGE_FALLING: flags |= GPIO_V2_LINE_FLAG_EDGE_FALLING; break;
	case PBUS_GPIO_EDGE_BOTH:
		flags |= GPIO_V2_LINE_FLAG_EDGE_RISING | GPIO_V2_LINE_FLAG_EDGE_FALLING;
		break;
	default: return -EINVAL;
	}
	if (s->edge != PBUS_GPIO_EDGE_NONE && !input)
		return -EINVAL;

	switch (s->clock) {
	case PBUS_GPIO_CLOCK_MONOTONIC: break;
	case PBUS_GPIO_CLOCK_REALTIME: flags |= GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME; break;
	case PBUS_GPIO_CLOCK_HTE: flags |= GPIO_V2_LINE_FLAG_EVENT_CLOCK_HTE; break;
	default: return -EINVAL;
	}

	if (s->debounce_period_us != 0 && !input)
		return -EINVAL;
	if (s->output_value != 0 && !output)
		return -EINVAL;

	*ret_flags = flags;
	return 0;
}

int pbus_gpio_encode_config(const struct pbus_gpio_line_settings *settings, size_t num_lines,
			    struct gpio_v2_line_config *ret_config)
{
	uint64_t flags[GPIO_V2_LINES_MAX] = { 0 };
	struct gpio_v2_line_config cfg;
	uint64_t output_mask = 0, output_bits = 0;

	if (num_lines == 0 || num_lines > GPIO_V2_LINES_MAX)
		return -EINVAL;

	for (size_t i = 0; i < num_lines; i++) {
		int r = pbus_gpio_settings_to_flags(&settings[i], &flags[i]);
		if (r < 0)
			return r;
		if (settings[i].direction == PBUS_GPIO_DIRECTION_OUTPUT) {
			output_mask |= UINT64_C(1) << i;
			if (settings[i].output_value)
				output_bits |= UINT64_C(1) << i;
		}
	}

	/* The most common flag set is the default: it needs no attribute.
	 * Ties go to the earliest line, which keeps the encoding deterministic. */
	size_t best = 0, best_count = 0;
	for (size_t i = 0; i < num_lines; i++) {
		size_t count = 0;
		for (size_t j = 0; j < num_lines; j++)
			count += flags[j] == flags[i];
		if (count > best_count) {
			best = i;
			best_count = count;
		}
	}

	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = flags[best];
	uint32_t n = 0;

	/* One FLAGS attribute per other distinct flag set, in order of first
	 * appearance; bit i of the mask is request index i. */
	uint64_t done = 0;
	for (size_t i = 0; i < num_lines; i++) {
		if (flags[i] == cfg.flags || (done & (UINT64_C(1) << i)))
			continue;
		uint64_t mask = 0;
		for (size_t j = i; j < num_lines; j++)
			if (flags[j] == flags[i])
				mask |= UINT64_C(1) << j;
		done |= mask;
		if (n == GPIO_V2_LINE_NUM_ATTRS_MAX)
			return -E2BIG;
		cfg.attrs[n].attr.id = GPIO_V2_LINE_ATTR_ID_FLAGS;
		cfg.attrs[n].attr.flags = flags[i];
		cfg.attrs[n].mask = mask;
		n++;
	}

	/* Initial output values, so outputs start at their level (no glitch). */
	if (output_mask) {
		if (n == GPIO_V2_LINE_NUM_ATTRS_MAX)
			return -E2BIG;
		cfg.attrs[n].attr.id = GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES;
		cfg.attrs[n].attr.values = output_bits;
		cfg.attrs[n].mask = output_mask;
		n++;
	}

	/* One DEBOUNCE attribute per distinct non-zero period; lines outside
	 * every debounce mask get none. */
	done = 0;
	for (size_t i = 0; i < num_lines; i++) {
		uint32_t period = settings[i].debounce_period_us;
		if (period == 0 || (done & (UINT64_C(1) << i)))
			continue;
		uint64_t mask = 0;
		for (size_t j = i; j < num_lines; j++)
			if (settings[j].debounce_period_us == period)
				mask |= UINT64_C(1) << j;
		done |= mask;
		if (n == GPIO_V2_LINE_NUM_ATTRS_MAX)
			return -E2BIG;
		cfg.attrs[n].attr.id = GPIO_V2_LINE_ATTR_ID_DEBOUNCE;
		cfg.attrs[n].attr.debounce_period_us = period;
		cfg.attrs[n].mask = mask;
		n++;
	}

	cfg.num_attrs = n;
	*ret_config = cfg;
	return 0;
}

void pbus_gpio_decode_line_info(const struct gpio_v2_line_info *k, struct pbus_gpio_line_info *ret)
{
	struct pbus_gpio_line_info info;
	const uint64_t f = k->flags;

	memset(&info, 0, sizeof(info));
	info.offset = k->offset;
	pbus_hw_copy_string(info.name, sizeof(info.name), k->name);
	pbus_hw_copy_string(info.consumer, sizeof(info.consumer), k->consumer);
	info.used = (f & GPIO_V2_LINE_FLAG_USED) != 0;

	struct pbus_gpio_line_settings *s = &info.settings;
	if (f & GPIO_V2_LINE_FLAG_OUTPUT)
		s->direction = PBUS_GPIO_DIRECTION_OUTPUT;
	else if (f & GPIO_V2_LINE_FLAG_INPUT)
		s->direction = PBUS_GPIO_DIRECTION_INPUT;
	s->active_low = (f & GPIO_V2_LINE_FLAG_ACTIVE_LOW) != 0;
	if (f & GPIO_V2_LINE_FLAG_BIAS_PULL_UP)
		s->bias = PBUS_GPIO_BIAS_PULL_UP;
	else if (f & GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN)
		s->bias = PBUS_GPIO_BIAS_PULL_DOWN;
	else if (f & GPIO_V2_LINE_FLAG_BIAS_DISABLED)
		s->bias = PBUS_GPIO_BIAS_DISABLED;
	if (f & GPIO_V2_LINE_FLAG_OPEN_DRAIN)
		s->drive = PBUS_GPIO_DRIVE_OPEN_DRAIN;
	else if (f & GPIO_V2_LINE_FLAG_OPEN_SOURCE)
		s->drive = PBUS_GPIO_DRIVE_OPEN_SOURCE;
	const uint64_t both = GPIO_V2_LINE_FLAG_EDGE_RISING | GPIO_V2_LINE_FLAG_EDGE_FALLING;
	if ((f & both) == both)
		s->edge = PBUS_GPIO_EDGE_BOTH;
	else if (f & GPIO_V2_LINE_FLAG_EDGE_RISING)
		s->edge = PBUS_GPIO_EDGE_RISING;
	else if (f & GPIO_V2_LINE_FLAG_EDGE_FALLING)
		s->edge = PBUS_GPIO_EDGE_FALLING;
	if (f & GPIO_V2_LINE_FLAG_EVENT_CLOCK_HTE)
		s->clock = PBUS_GPIO_CLOCK_HTE;
	else if (f & GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME)
		s->clock = PBUS_GPIO_CLOCK_REALTIME;
	for (uint32_t i = 0; i < k->num_attrs && i < GPIO_V2_LINE_NUM_ATTRS_MAX; i++)
		if (k->attrs[i].id == GPIO_V2_LINE_ATTR_ID_DEBOUNCE)
			s->debounce_period_us = k->attrs[i].debounce_period_us;
	*ret = info;
}

/* ---- chips ------------------------------------------------------------ */

int pbus_gpio_chip_open(const char *path, struct pbus_gpio_chip **ret_chip)
{
	struct gpiochip_info kinfo;

	if (!path || !*path || !ret_chip)
		return -EINVAL;

	memset(&kinfo, 0, sizeof(kinfo));
	int fd = pbus_hw_open_device(path, GPIO_GET_CHIPINFO_IOCTL, &kinfo);
	if (fd < 0)
		return fd;

	size_t len = strlen(path);
	struct pbus_gpio_chip *chip = malloc(sizeof(*chip) + len + 1);
	if (!chip) {
		close(fd);
		return -ENOMEM;
	}
	chip->fd = fd;
	pbus_hw_copy_string(chip->info.name, sizeof(chip->info.name), kinfo.name);
	pbus_hw_copy_string(chip->info.label, sizeof(chip->info.label), kinfo.label);
	chip->info.num_lines = kinfo.lines;
	memcpy(chip->path, path, len + 1);
	*ret_chip = chip;
	return 0;
}

int pbus_gpio_chip_open_by_name(const char *name, struct pbus_gpio_chip **ret_chip)
{
	char path[PATH_MAX];

	if (!name || !*name || strchr(name, '/') || !ret_chip)
		return -EINVAL;
	int n = snprintf(path, sizeof(path), "/dev/%s", name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -EINVAL;
	return pbus_gpio_chip_open(path, ret_chip);
}

/* "gpiochip" followed by digits only. */
static int chip_number(const char *name)
{
	if (strncmp(name, "gpiochip", 8) != 0 || !name[8])
		return -1;
	long v = 0;
	for (const char *p = name + 8; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100000)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return (int)v;
}

static int chip_filter(const struct dirent *d)
{
	return chip_number(d->d_name) >= 0;
}

static int chip_compare(const struct dirent **a, const struct dirent **b)
{
	return chip_number((*a)->d_name) - chip_number((*b)->d_name);
}

/* Calls @fn on every chip in number order until it returns non-zero; that
 * value is returned (0 if it never did).  Unopenable chips are skipped. */
static int for_each_chip(int (*fn)(struct pbus_gpio_chip *chip, void *userdata), void *userdata)
{
	struct dirent **list;
	int n = scandir("/dev", &list, chip_filter, chip_compare);
	if (n < 0)
		return -errno;
	int r = 0;
	for (int i = 0; i < n; i++) {
		struct pbus_gpio_chip *chip = NULL;
		if (r == 0 && pbus_gpio_chip_open_by_name(list[i]->d_name, &chip) == 0) {
			r = fn(chip, userdata); /* takes ownership of chip */
		}
		free(list[i]);
	}
	free(list);
	return r;
}

struct label_match {
	const char *label;
	struct pbus_gpio_chip *found;
};

static int match_label(struct pbus_gpio_chip *chip, void *userdata)
{
	struct label_match *m = userdata;
	if (strcmp(chip->info.label, m->label) == 0) {
		m->found = chip;
		return 1;
	}
	pbus_gpio_chip_close(chip);
	return 0;
}

int pbus_gpio_chip_open_by_label(const char *label, struct pbus_gpio_chip **ret_chip)
{
	struct label_match m = { label, NULL };

	if (!label || !*label || !ret_chip)
		return -EINVAL;
	int r = for_each_chip(match_label, &m);
	if (r < 0)
		return r;
	if (!m.found)
		return -ENOENT;
	*ret_chip = m.found;
	return 0;
}

int pbus_gpio_chip_open_lookup(const char *chip, struct pbus_gpio_chip **ret_chip)
{
	char name[32];

	if (!chip || !*chip || !ret_chip)
		return -EINVAL;
	if (strchr(chip, '/'))
		return pbus_gpio_chip_open(chip, ret_chip);
	if (chip_number(chip) >= 0)
		return pbus_gpio_chip_open_by_name(chip, ret_chip);
	if (strspn(chip, "0123456789") == strlen(chip) && strlen(chip) < 8) {
		snprintf(name, sizeof(name), "gpiochip%s", chip);
		return pbus_gpio_chip_open_by_name(name, ret_chip);
	}
	return pbus_gpio_chip_open_by_label(chip, ret_chip);
}

void pbus_gpio_chip_close(struct pbus_gpio_chip *chip)
{
	if (!chip)
		return;
	close(chip->fd);
	free(chip);
}

int pbus_gpio_chip_get_fd(const struct pbus_gpio_chip *chip)
{
	return chip ? chip->fd : -EINVAL;
}

const char *pbus_gpio_chip_get_path(const struct pbus_gpio_chip *chip)
{
	return chip ? chip->path : NULL;
}

int pbus_gpio_chip_get_info(struct pbus_gpio_chip *chip, struct pbus_gpio_chip_info *ret_info)
{
	struct gpiochip_info kinfo;

	if (!chip || !ret_info)
		return -EINVAL;
	/* Ask the kernel again rather than answer from the cache: this is also
	 * how a caller learns that the chip went away. */
	memset(&kinfo, 0, sizeof(kinfo));
	int r = pbus_hw_ioctl(chip->fd, GPIO_GET_CHIPINFO_IOCTL, &kinfo);
	if (r < 0)
		return r;
	pbus_hw_copy_string(ret_info->name, sizeof(ret_info->name), kinfo.name);
	pbus_hw_copy_string(ret_info->label, sizeof(ret_info->label), kinfo.label);
	ret_info->num_lines = kinfo.lines;
	return 0;
}

static int line_info_ioctl(struct pbus_gpio_chip *chip, unsigned long request, unsigned int offset,
			   struct pbus_gpio_line_info *ret_info)
{
	struct gpio_v2_line_info kinfo;

	if (!chip)
		return -EINVAL;
	if (offset >= chip->info.num_lines)
		return -EINVAL;
	memset(&kinfo, 0, sizeof(kinfo));
	kinfo.offset = offset;
	int r = pbus_hw_ioctl(chip->fd, request, &kinfo);
	if (r < 0)
		return r;
	if (ret_info)
		pbus_gpio_decode_line_info(&kinfo, ret_info);
	return 0;
}

int pbus_gpio_chip_get_line_info(struct pbus_gpio_chip *chip, unsigned int offset,
				 struct pbus_gpio_line_info *ret_info)
{
	if (!ret_info)
		return -EINVAL;
	return line_info_ioctl(chip, GPIO_V2_GET_LINEINFO_IOCTL, offset, ret_info);
}

int pbus_gpio_chip_find_line(struct pbus_gpio_chip *chip, const char *name, unsigned int *ret_offset)
{
	struct pbus_gpio_line_info info;

	if (!chip || !name || !*name || !ret_offset)
		return -EINVAL;
	for (unsigned int i = 0; i < chip->info.num_lines; i++) {
		int r = pbus_gpio_chip_get_line_info(chip, i, &info);
		if (r < 0)
			return r;
		if (strcmp(info.name, name) == 0) {
			*ret_offset = i;
			return 0;
		}
	}
	return -ENOENT;
}

struct line_match {
	const char *name;
	struct pbus_gpio_chip *chip;
	unsigned int offset;
};

static int match_line(struct pbus_gpio_chip *chip, void *userdata)
{
	struct line_match *m = userdata;
	unsigned int offset;
	if (pbus_gpio_chip_find_line(chip, m->name, &offset) == 0) {
		m->chip = chip;
		m->offset = offset;
		return 1;
	}
	pbus_gpio_chip_close(chip);
	return 0;
}

int pbus_gpio_find_line(const char *name, struct pbus_gpio_chip **ret_chip, unsigned int *ret_offset)
{
	struct line_match m = { name, NULL, 0 };

	if (!name || !*name)
		return -EINVAL;
	int r = for_each_chip(match_line, &m);
	if (r < 0)
		return r;
	if (!m.chip)
		return -ENOENT;
	if (ret_offset)
		*ret_offset = m.offset;
	if (ret_chip)
		*ret_chip = m.chip;
	else
		pbus_gpio_chip_close(m.chip);
	return 0;
}

int pbus_gpio_chip_watch_line_info(struct pbus_gpio_chip *chip, unsigned int offset,
				   struct pbus_gpio_line_info *ret_info)
{
	return line_info_ioctl(chip, GPIO_V2_GET_LINEINFO_WATCH_IOCTL, offset, ret_info);
}

int pbus_gpio_chip_unwatch_line_info(struct pbus_gpio_chip *chip, unsigned int offset)
{
	if (!chip || offset >= chip->info.num_lines)
		return -EINVAL;
	__u32 koffset = offset;
	int r = pbus_hw_ioctl(chip->fd, GPIO_GET_LINEINFO_UNWATCH_IOCTL, &koffset);
	return r < 0 ? r : 0;
}

static int wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r = poll(&p, 1, timeout_ms);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	if (p.revents & POLLNVAL)
		return -EBADF;
	return 1; /* POLLIN, or POLLERR/POLLHUP, which the read will report */
}

int pbus_gpio_chip_wait_info_event(struct pbus_gpio_chip *chip, int timeout_ms)
{
	if (!chip)
		return -EINVAL;
	return wait_readable(chip->fd, timeout_ms);
}

int pbus_gpio_chip_read_info_event(struct pbus_gpio_chip *chip, struct pbus_gpio_info_event *ret_event)
{
	struct gpio_v2_line_info_changed kevent;

	if (!chip || !ret_event)
		return -EINVAL;
	ssize_t n = read(chip->fd, &kevent, sizeof(kevent));
	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(kevent))
		return -EIO;
	ret_event->type = (enum pbus_gpio_info_event_type)kevent.event_type;
	ret_event->timestamp_ns = kevent.timestamp_ns;
	pbus_gpio_decode_line_info(&kevent.info, &ret_event->info);
	return 0;
}

/* ---- requests --------------------------------------------------------- */

int pbus_gpio_request_lines(struct pbus_gpio_chip *chip, const struct pbus_gpio_request_config *config,
			    const unsigned int *offsets, const struct pbus_gpio_line_settings *settings,
			    size_t num_lines, struct pbus_gpio_request **ret_request)
{
	struct gpio_v2_line_request kreq;

	if (!chip || !offsets || !settings || !ret_request)
		return -EINVAL;
	if (num_lines == 0 || num_lines > GPIO_V2_LINES_MAX)
		return -EINVAL;

	memset(&kreq, 0, sizeof(kreq));
	for (size_t i = 0; i < num_lines; i++) {
		if (offsets[i] >= chip->info.num_lines)
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (offsets[j] == offsets[i])
				return -EINVAL;
		kreq.offsets[i] = offsets[i];
	}
	int r = pbus_gpio_encode_config(settings, num_lines, &kreq.config);
	if (r < 0)
		return r;
	pbus_hw_copy_string(kreq.consumer, sizeof(kreq.consumer),
			    config && config->consumer ? config->consumer : DEFAULT_CONSUMER);
	kreq.num_lines = (uint32_t)num_lines;
	kreq.event_buffer_size = config ? config->event_buffer_size : 0;

	struct pbus_gpio_request *req = calloc(1, sizeof(*req));
	if (!req)
		return -ENOMEM;

	r = pbus_hw_ioctl(chip->fd, GPIO_V2_GET_LINE_IOCTL, &kreq);
	if (r < 0) {
		free(req);
		return r;
	}
	/* The kernel creates the line descriptor O_CLOEXEC. */
	req->fd = kreq.fd;
	req->num_lines = (uint32_t)num_lines;
	req->all_mask = num_lines == 64 ? UINT64_MAX : (UINT64_C(1) << num_lines) - 1;
	memcpy(req->offsets, kreq.offsets, num_lines * sizeof(req->offsets[0]));

	if (config && config->nonblocking) {
		int fl = fcntl(req->fd, F_GETFL);
		if (fl < 0 || fcntl(req->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
			r = -errno;
			pbus_gpio_request_release(req);
			return r;
		}
	}
	*ret_request = req;
	return 0;
}

void pbus_gpio_request_release(struct pbus_gpio_request *request)
{
	if (!request)
		return;
	close(request->fd);
	free(request);
}

int pbus_gpio_request_get_fd(const struct pbus_gpio_request *request)
{
	return request ? request->fd : -EINVAL;
}

size_t pbus_gpio_request_get_num_lines(const struct pbus_gpio_request *request)
{
	return request ? request->num_lines : 0;
}

int pbus_gpio_request_get_offset(const struct pbus_gpio_request *request, size_t index)
{
	if (!request || index >= request->num_lines)
		return -EINVAL;
	return (int)request->offsets[index];
}

static inline int index_of(const struct pbus_gpio_request *request, unsigned int offset)
{
	for (uint32_t i = 0; i < request->num_lines; i++)
		if (request->offsets[i] == offset)
			return (int)i;
	return -ENOENT;
}

int pbus_gpio_request_get_index(const struct pbus_gpio_request *request, unsigned int offset)
{
	if (!request)
		return -EINVAL;
	return index_of(request, offset);
}

int pbus_gpio_request_get_values(struct pbus_gpio_request *request, uint64_t mask, uint64_t *ret_bits)
{
	if (!request || !ret_bits || mask == 0 || (mask & ~request->all_mask))
		return -EINVAL;
	struct gpio_v2_line_values v = { .bits = 0, .mask = mask };
	int r = pbus_hw_ioctl(request->fd, GPIO_V2_LINE_GET_VALUES_IOCTL, &v);
	if (r < 0)
		return r;
	*ret_bits = v.bits & mask;
	return 0;
}

int pbus_gpio_request_set_values(struct pbus_gpio_request *request, uint64_t mask, uint64_t bits)
{
	if (!request || mask == 0 || (mask & ~request->all_mask))
		return -EINVAL;
	struct gpio_v2_line_values v = { .bits = bits & mask, .mask = mask };
	int r = pbus_hw_ioctl(request->fd, GPIO_V2_LINE_SET_VALUES_IOCTL, &v);
	return r < 0 ? r : 0;
}

int pbus_gpio_request_get_value(struct pbus_gpio_request *request, unsigned int offset)
{
	if (!request)
		return -EINVAL;
	int i = index_of(request, offset);
	if (i < 0)
		return i;
	uint64_t bits;
	int r = pbus_gpio_request_get_values(request, UINT64_C(1) << i, &bits);
	return r < 0 ? r : (bits != 0);
}

int pbus_gpio_request_set_value(struct pbus_gpio_request *request, unsigned int offset, int value)
{
	if (!request)
		return -EINVAL;
	int i = index_of(request, offset);
	if (i < 0)
		return i;
	uint64_t bit = UINT64_C(1) << i;
	return pbus_gpio_request_set_values(request, bit, value ? bit : 0);
}

static int offsets_to_mask(const struct pbus_gpio_request *request, const unsigned int *offsets, size_t num,
			   uint64_t *ret_mask)
{
	uint64_t mask = 0;
	if (num == 0 || num > request->num_lines)
		return -EINVAL;
	for (size_t k = 0; k < num; k++) {
		int i = index_of(request, offsets[k]);
		if (i < 0)
			return i;
		mask |= UINT64_C(1) << i;
	}
	*ret_mask = mask;
	return 0;
}

int pbus_gpio_request_get_values_by_offset(struct pbus_gpio_request *request, const unsigned int *offsets,
					   size_t num, int *values)
{
	uint64_t mask, bits;

	if (!request || !offsets || !values)
		return -EINVAL;
	int r = offsets_to_mask(request, offsets, num, &mask);
	if (r < 0)
		return r;
	r = pbus_gpio_request_get_values(request, mask, &bits);
	if (r < 0)
		return r;
	for (size_t k = 0; k < num; k++)
		values[k] = (int)((bits >> index_of(request, offsets[k])) & 1);
	return 0;
}

int pbus_gpio_request_set_values_by_offset(struct pbus_gpio_request *request, const unsigned int *offsets,
					   size_t num, const int *values)
{
	uint64_t mask = 0, bits = 0;

	if (!request || !offsets || !values || num == 0 || num > request->num_lines)
		return -EINVAL;
	for (size_t k = 0; k < num; k++) {
		int i = index_of(request, offsets[k]);
		if (i < 0)
			return i;
		mask |= UINT64_C(1) << i;
		if (values[k])
			bits |= UINT64_C(1) << i;
	}
	return pbus_gpio_request_set_values(request, mask, bits);
}

int pbus_gpio_request_reconfigure(struct pbus_gpio_request *request,
				  const struct pbus_gpio_line_settings *settings, size_t num_lines)
{
	struct gpio_v2_line_config cfg;

	if (!request || !settings || num_lines != request->num_lines)
		return -EINVAL;
	int r = pbus_gpio_encode_config(settings, num_lines, &cfg);
	if (r < 0)
		return r;
	r = pbus_hw_ioctl(request->fd, GPIO_V2_LINE_SET_CONFIG_IOCTL, &cfg);
	return r < 0 ? r : 0;
}

int pbus_gpio_request_wait_events(struct pbus_gpio_request *request, int timeout_ms)
{
	if (!request)
		return -EINVAL;
	return wait_readable(request->fd, timeout_ms);
}

int pbus_gpio_request_read_events(struct pbus_gpio_request *request, struct pbus_gpio_edge_event *events,
				  size_t max_events)
{
	if (!request || !events || max_events == 0)
		return -EINVAL;
	if (max_events > INT_MAX / sizeof(*events))
		max_events = INT_MAX / sizeof(*events);
	/* EINTR is reported, not retried: a signal may be the caller's way to stop. */
	ssize_t n = read(request->fd, events, max_events * sizeof(*events));
	if (n < 0)
		return -errno;
	if (n == 0 || (size_t)n % sizeof(*events) != 0)
		return -EIO;
	return (int)((size_t)n / sizeof(*events));
}
