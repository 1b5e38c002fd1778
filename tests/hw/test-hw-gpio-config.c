/* SPDX-License-Identifier: MIT */
/*
 * test-hw-gpio-config.c - GPIO request encoding without a device.
 *
 * The encoder is checked directly (flags, attributes, and above all that
 * attribute masks index the REQUEST's lines, not the chip offsets), then the
 * whole request path is driven through the ioctl test hook with /dev/null
 * standing in for a chip: the hook answers GPIO_GET_CHIPINFO_IOCTL and
 * GPIO_V2_GET_LINE_IOCTL and records what the library sent.  This is a fake
 * because the host has no GPIO chip; the same paths run against gpio-sim in
 * the VM suite (tests/kernel/suite/test-gpio.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "alloc-count.h"
#include "hw-internal.h"
#include "pbus-check.h"
#include "parambus/hw/gpio.h"

/* A recognisable pointer, to check that ret_* stays untouched on failure. */
static char sentinel_storage;
#define SENTINEL ((void *)&sentinel_storage)

static const struct gpio_v2_line_config_attribute *find_attr(const struct gpio_v2_line_config *c, uint32_t id,
							     unsigned int nth)
{
	for (uint32_t i = 0; i < c->num_attrs; i++)
		if (c->attrs[i].attr.id == id && nth-- == 0)
			return &c->attrs[i];
	return NULL;
}

static void encode_mask_indexes_request_lines(void)
{
	/* Three lines at chip offsets 7, 3 and 12; only the SECOND one (index
	 * 1, offset 3) is an output starting high.  The attribute masks must
	 * be 0b010, never 1 << 3. */
	struct pbus_gpio_line_settings s[3] = {
		{ .direction = PBUS_GPIO_DIRECTION_INPUT },
		{ .direction = PBUS_GPIO_DIRECTION_OUTPUT, .output_value = 1 },
		{ .direction = PBUS_GPIO_DIRECTION_INPUT },
	};
	struct gpio_v2_line_config c;
	REQUIRE_EQ(pbus_gpio_encode_config(s, 3, &c), 0);
	REQUIRE_EQ(c.flags, GPIO_V2_LINE_FLAG_INPUT); /* the most common flag set */
	REQUIRE_EQ(c.num_attrs, 2);
	const struct gpio_v2_line_config_attribute *a = find_attr(&c, GPIO_V2_LINE_ATTR_ID_FLAGS, 0);
	REQUIRE(a);
	REQUIRE_EQ(a->attr.flags, GPIO_V2_LINE_FLAG_OUTPUT);
	REQUIRE_EQ(a->mask, 0x2);
	a = find_attr(&c, GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES, 0);
	REQUIRE(a);
	REQUIRE_EQ(a->mask, 0x2);
	REQUIRE_EQ(a->attr.values, 0x2);
}

static void encode_per_line_everything(void)
{
	struct pbus_gpio_line_settings s[6] = {
		{ .direction = PBUS_GPIO_DIRECTION_INPUT, .bias = PBUS_GPIO_BIAS_PULL_UP,
		  .edge = PBUS_GPIO_EDGE_BOTH, .debounce_period_us = 1000 },
		{ .direction = PBUS_GPIO_DIRECTION_INPUT, .bias = PBUS_GPIO_BIAS_PULL_UP,
		  .edge = PBUS_GPIO_EDGE_BOTH, .debounce_period_us = 1000 },
		{ .direction = PBUS_GPIO_DIRECTION_INPUT, .bias = PBUS_GPIO_BIAS_PULL_DOWN,
		  .edge = PBUS_GPIO_EDGE_RISING, .clock = PBUS_GPIO_CLOCK_REALTIME, .active_low = true,
		  .debounce_period_us = 5000 },
		{ .direction = PBUS_GPIO_DIRECTION_OUTPUT, .drive = PBUS_GPIO_DRIVE_OPEN_DRAIN, .output_value = 1 },
		{ .direction = PBUS_GPIO_DIRECTION_OUTPUT, .drive = PBUS_GPIO_DRIVE_OPEN_SOURCE },
		{ .direction = PBUS_GPIO_DIRECTION_INPUT, .bias = PBUS_GPIO_BIAS_DISABLED,
		  .edge = PBUS_GPIO_EDGE_FALLING, .clock = PBUS_GPIO_CLOCK_HTE },
	};
	struct gpio_v2_line_config c;
	REQUIRE_EQ(pbus_gpio_encode_config(s, 6, &c), 0);
	const uint64_t in_up_both = GPIO_V2_LINE_FLAG_INPUT | GPIO_V2_LINE_FLAG_BIAS_PULL_UP |
				    GPIO_V2_LINE_FLAG_EDGE_RISING | GPIO_V2_LINE_FLAG_EDGE_FALLING;
	REQUIRE_EQ(c.flags, in_up_both);
	/* flags attrs for indexes 2, 3, 4, 5 in order, then output values,
	 * then two debounce periods. */
	REQUIRE_EQ(c.num_attrs, 7);
	const struct gpio_v2_line_config_attribute *a;
	a = find_attr(&c, GPIO_V2_LINE_ATTR_ID_FLAGS, 0);
	REQUIRE_EQ(a->mask, 1u << 2);
	REQUIRE_EQ(a->attr.flags, GPIO_V2_LINE_FLAG_INPUT | GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN |
					 GPIO_V2_LINE_FLAG_EDGE_RISING | GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME |
					 GPIO_V2_LINE_FLAG_ACTIVE_LOW);
	a = find_attr(&c, GPIO_V2_LINE_ATTR_ID_FLAGS, 1);
	REQUIRE_EQ(a->mask, 1u << 3);
	REQUIRE_EQ(a->attr.flags, GPIO_V2_LINE_FLAG_OUTPUT | GPIO_V2_LINE_FLAG_OPEN_DRAIN);
	a = find_attr(&c, GPIO_V2_LINE_ATTR_ID_FLAGS, 2);
	REQUIRE_EQ(a->mask, 1u << 4);
	REQUIRE_EQ(a->attr.flags, GPIO_V2_LINE_FLAG_OUTPUT | GPIO_V2_LINE_FLAG_OPEN_SOURCE);
	a = find_attr(&c, GPIO_V2_LINE_ATTR_ID_FLAGS, 3);
	REQUIRE_EQ(a->mask, 1u << 5);
	REQUIRE_EQ(a->attr.flags, GPIO_V2_LINE_FLAG_INPUT | GPIO_V2_LINE_FLAG_BIAS_DISABLED |
					 GPIO_V2_LINE_FLAG_EDGE_FALLING | GPIO_V2_LINE_FLAG_EVENT_CLOCK_HTE);
	a = find_attr(&c, GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES, 0);
	REQUIRE_EQ(a->mask, (1u << 3) | (1u << 4));
	REQUIRE_EQ(a->attr.values, 1u << 3);
	a = find_attr(&c, GPIO_V2_LINE_ATTR_ID_DEBOUNCE, 0);
	REQUIRE_EQ(a->mask, 0x3);
	REQUIRE_EQ(a->attr.debounce_period_us, 1000);
	a = find_attr(&c, GPIO_V2_LINE_ATTR_ID_DEBOUNCE, 1);
	REQUIRE_EQ(a->mask, 1u << 2);
	REQUIRE_EQ(a->attr.debounce_period_us, 5000);
	REQUIRE(find_attr(&c, GPIO_V2_LINE_ATTR_ID_DEBOUNCE, 2) == NULL);
}

static void encode_64_lines_uniform(void)
{
	struct pbus_gpio_line_settings s[64];
	memset(s, 0, sizeof(s));
	for (int i = 0; i < 64; i++) {
		s[i].direction = PBUS_GPIO_DIRECTION_OUTPUT;
		s[i].output_value = i & 1;
	}
	struct gpio_v2_line_config c;
	REQUIRE_EQ(pbus_gpio_encode_config(s, 64, &c), 0);
	REQUIRE_EQ(c.flags, GPIO_V2_LINE_FLAG_OUTPUT);
	REQUIRE_EQ(c.num_attrs, 1);
	REQUIRE(c.attrs[0].mask == UINT64_MAX);
	REQUIRE(c.attrs[0].attr.values == UINT64_C(0xaaaaaaaaaaaaaaaa));
}

static void encode_too_many_attributes(void)
{
	/* 11 distinct debounce periods cannot fit in 10 attributes. */
	struct pbus_gpio_line_settings s[11];
	memset(s, 0, sizeof(s));
	for (int i = 0; i < 11; i++) {
		s[i].direction = PBUS_GPIO_DIRECTION_INPUT;
		s[i].debounce_period_us = (uint32_t)(100 + i);
	}
	struct gpio_v2_line_config c;
	REQUIRE_EQ(pbus_gpio_encode_config(s, 11, &c), -E2BIG);
	REQUIRE_EQ(pbus_gpio_encode_config(s, 10, &c), 0);
	REQUIRE_EQ(c.num_attrs, 10);
}

static void encode_rejects_contradictions(void)
{
	struct gpio_v2_line_config c;
	struct pbus_gpio_line_settings s;
#define REJECT(...)                                                              \
	do {                                                                     \
		struct pbus_gpio_line_settings t_ = { __VA_ARGS__ };             \
		s = t_;                                                          \
		REQUIRE_EQ(pbus_gpio_encode_config(&s, 1, &c), -EINVAL);          \
	} while (0)
	REJECT(.direction = PBUS_GPIO_DIRECTION_OUTPUT, .edge = PBUS_GPIO_EDGE_RISING);
	REJECT(.direction = PBUS_GPIO_DIRECTION_AS_IS, .edge = PBUS_GPIO_EDGE_BOTH);
	REJECT(.direction = PBUS_GPIO_DIRECTION_INPUT, .drive = PBUS_GPIO_DRIVE_OPEN_DRAIN);
	REJECT(.direction = PBUS_GPIO_DIRECTION_AS_IS, .bias = PBUS_GPIO_BIAS_PULL_UP);
	REJECT(.direction = PBUS_GPIO_DIRECTION_OUTPUT, .debounce_period_us = 10);
	REJECT(.direction = PBUS_GPIO_DIRECTION_INPUT, .output_value = 1);
	REJECT(.direction = (enum pbus_gpio_direction)7);
	REJECT(.direction = PBUS_GPIO_DIRECTION_INPUT, .clock = (enum pbus_gpio_clock)9);
	REQUIRE_EQ(pbus_gpio_encode_config(&s, 0, &c), -EINVAL);
	REQUIRE_EQ(pbus_gpio_encode_config(&s, 65, &c), -EINVAL);
}

static void decode_line_info(void)
{
	struct gpio_v2_line_info k;
	struct pbus_gpio_line_info info;
	memset(&k, 0, sizeof(k));
	k.offset = 5;
	strcpy(k.name, "LED0");
	strcpy(k.consumer, "someone");
	k.flags = GPIO_V2_LINE_FLAG_USED | GPIO_V2_LINE_FLAG_INPUT | GPIO_V2_LINE_FLAG_EDGE_RISING |
		  GPIO_V2_LINE_FLAG_EDGE_FALLING | GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN |
		  GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME | GPIO_V2_LINE_FLAG_ACTIVE_LOW;
	k.num_attrs = 1;
	k.attrs[0].id = GPIO_V2_LINE_ATTR_ID_DEBOUNCE;
	k.attrs[0].debounce_period_us = 2500;
	pbus_gpio_decode_line_info(&k, &info);
	REQUIRE_EQ(info.offset, 5);
	REQUIRE(strcmp(info.name, "LED0") == 0);
	REQUIRE(strcmp(info.consumer, "someone") == 0);
	REQUIRE(info.used);
	REQUIRE_EQ(info.settings.direction, PBUS_GPIO_DIRECTION_INPUT);
	REQUIRE_EQ(info.settings.edge, PBUS_GPIO_EDGE_BOTH);
	REQUIRE_EQ(info.settings.bias, PBUS_GPIO_BIAS_PULL_DOWN);
	REQUIRE_EQ(info.settings.clock, PBUS_GPIO_CLOCK_REALTIME);
	REQUIRE(info.settings.active_low);
	REQUIRE_EQ(info.settings.debounce_period_us, 2500);
}

/* ---- the whole path, through the ioctl hook ---------------------------- */

static struct {
	int calls;
	unsigned long last_request;
	struct gpio_v2_line_request req;
	struct gpio_v2_line_values values;
	struct gpio_v2_line_config config;
	int fail_with; /* inject this error into the next line ioctl */
} fake;

static int fake_chip(int fd, unsigned long request, void *arg, void *userdata, bool *handled)
{
	(void)fd;
	(void)userdata;
	fake.calls++;
	fake.last_request = request;
	*handled = true;
	if (request == GPIO_GET_CHIPINFO_IOCTL) {
		struct gpiochip_info *i = arg;
		strcpy(i->name, "gpiochip9");
		strcpy(i->label, "fake-chip");
		i->lines = 32;
		return 0;
	}
	if (fake.fail_with) {
		int r = fake.fail_with;
		fake.fail_with = 0;
		return r;
	}
	switch (request) {
	case GPIO_V2_GET_LINE_IOCTL:
		memcpy(&fake.req, arg, sizeof(fake.req));
		((struct gpio_v2_line_request *)arg)->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return 0;
	case GPIO_V2_LINE_SET_VALUES_IOCTL:
		memcpy(&fake.values, arg, sizeof(fake.values));
		return 0;
	case GPIO_V2_LINE_GET_VALUES_IOCTL: {
		struct gpio_v2_line_values *v = arg;
		fake.values = *v;
		v->bits = UINT64_C(0x5555555555555555) & v->mask;
		return 0;
	}
	case GPIO_V2_LINE_SET_CONFIG_IOCTL:
		memcpy(&fake.config, arg, sizeof(fake.config));
		return 0;
	}
	*handled = false;
	return 0;
}

static void request_through_hook(void)
{
	struct pbus_gpio_chip *chip = NULL;
	struct pbus_gpio_request *req = NULL;

	memset(&fake, 0, sizeof(fake));
	pbus_hw_set_ioctl_hook(fake_chip, NULL);
	REQUIRE_EQ(pbus_gpio_chip_open("/dev/null", &chip), 0);

	struct pbus_gpio_chip_info info;
	REQUIRE_EQ(pbus_gpio_chip_get_info(chip, &info), 0);
	REQUIRE(strcmp(info.label, "fake-chip") == 0);
	REQUIRE_EQ(info.num_lines, 32);

	const unsigned int offsets[4] = { 20, 3, 31, 8 };
	struct pbus_gpio_line_settings s[4] = {
		{ .direction = PBUS_GPIO_DIRECTION_OUTPUT, .output_value = 1 },
		{ .direction = PBUS_GPIO_DIRECTION_OUTPUT, .output_value = 0 },
		{ .direction = PBUS_GPIO_DIRECTION_OUTPUT, .output_value = 1 },
		{ .direction = PBUS_GPIO_DIRECTION_INPUT, .edge = PBUS_GPIO_EDGE_BOTH },
	};
	struct pbus_gpio_request_config rc = { .consumer = "test-consumer", .event_buffer_size = 77 };
	REQUIRE_EQ(pbus_gpio_request_lines(chip, &rc, offsets, s, 4, &req), 0);
	REQUIRE_EQ(fake.last_request, GPIO_V2_GET_LINE_IOCTL);
	REQUIRE_EQ(fake.req.num_lines, 4);
	REQUIRE_EQ(fake.req.offsets[0], 20);
	REQUIRE_EQ(fake.req.offsets[3], 8);
	REQUIRE_EQ(fake.req.event_buffer_size, 77);
	REQUIRE(strcmp(fake.req.consumer, "test-consumer") == 0);
	REQUIRE_EQ(fake.req.config.flags, GPIO_V2_LINE_FLAG_OUTPUT);
	const struct gpio_v2_line_config_attribute *ov =
		find_attr(&fake.req.config, GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES, 0);
	REQUIRE(ov);
	REQUIRE_EQ(ov->mask, 0x7);   /* indexes 0..2, not offsets 20, 3, 31 */
	REQUIRE_EQ(ov->attr.values, 0x5);
	REQUIRE_EQ(pbus_gpio_request_get_num_lines(req), 4);
	REQUIRE_EQ(pbus_gpio_request_get_offset(req, 2), 31);
	REQUIRE_EQ(pbus_gpio_request_get_index(req, 8), 3);
	REQUIRE_EQ(pbus_gpio_request_get_index(req, 9), -ENOENT);

	/* Bulk set of a subset, by mask and by offset, one ioctl each. */
	fake.calls = 0;
	REQUIRE_EQ(pbus_gpio_request_set_values(req, 0x5, 0x4), 0);
	REQUIRE_EQ(fake.calls, 1);
	REQUIRE_EQ(fake.values.mask, 0x5);
	REQUIRE_EQ(fake.values.bits, 0x4);
	const unsigned int sub[2] = { 31, 3 };
	const int vals[2] = { 0, 7 };
	REQUIRE_EQ(pbus_gpio_request_set_values_by_offset(req, sub, 2, vals), 0);
	REQUIRE_EQ(fake.values.mask, 0x6);
	REQUIRE_EQ(fake.values.bits, 0x2);
	REQUIRE_EQ(pbus_gpio_request_set_value(req, 20, 1), 0);
	REQUIRE_EQ(fake.values.mask, 0x1);
	REQUIRE_EQ(fake.values.bits, 0x1);
	REQUIRE_EQ(pbus_gpio_request_set_value(req, 21, 1), -ENOENT);
	REQUIRE_EQ(pbus_gpio_request_set_values(req, 0x10, 0), -EINVAL); /* beyond 4 lines */
	REQUIRE_EQ(pbus_gpio_request_set_values(req, 0, 0), -EINVAL);

	uint64_t bits = 0;
	REQUIRE_EQ(pbus_gpio_request_get_values(req, 0xf, &bits), 0);
	REQUIRE_EQ(bits, 0x5);
	REQUIRE_EQ(pbus_gpio_request_get_value(req, 3), 0);  /* index 1 */
	REQUIRE_EQ(pbus_gpio_request_get_value(req, 31), 1); /* index 2 */
	int got[2] = { -1, -1 };
	REQUIRE_EQ(pbus_gpio_request_get_values_by_offset(req, sub, 2, got), 0);
	REQUIRE(got[0] == 1 && got[1] == 0);

	/* Injected faults come back unchanged, and outputs stay untouched. */
	fake.fail_with = -ENODEV;
	REQUIRE_EQ(pbus_gpio_request_set_value(req, 20, 0), -ENODEV);
	fake.fail_with = -EPERM;
	bits = 0xdead;
	REQUIRE_EQ(pbus_gpio_request_get_values(req, 0x1, &bits), -EPERM);
	REQUIRE_EQ(bits, 0xdead); /* ret_* untouched on failure */

	/* Reconfigure sends one SET_CONFIG with the whole config. */
	s[0].direction = PBUS_GPIO_DIRECTION_INPUT;
	s[0].output_value = 0;
	REQUIRE_EQ(pbus_gpio_request_reconfigure(req, s, 3), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_reconfigure(req, s, 4), 0);
	REQUIRE_EQ(fake.last_request, GPIO_V2_LINE_SET_CONFIG_IOCTL);
	ov = find_attr(&fake.config, GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES, 0);
	REQUIRE(ov && ov->mask == 0x6 && ov->attr.values == 0x4);

	pbus_gpio_request_release(req);
	pbus_gpio_chip_close(chip);
	pbus_hw_set_ioctl_hook(NULL, NULL);
}

static void request_argument_checks(void)
{
	struct pbus_gpio_chip *chip = NULL;
	struct pbus_gpio_request *req = SENTINEL;
	struct pbus_gpio_line_settings s[2] = { { .direction = PBUS_GPIO_DIRECTION_INPUT },
						{ .direction = PBUS_GPIO_DIRECTION_INPUT } };

	memset(&fake, 0, sizeof(fake));
	pbus_hw_set_ioctl_hook(fake_chip, NULL);
	REQUIRE_EQ(pbus_gpio_chip_open("/dev/null", &chip), 0);
	const unsigned int dup[2] = { 4, 4 }, far[2] = { 4, 32 }, ok[2] = { 1, 2 };
	REQUIRE_EQ(pbus_gpio_request_lines(chip, NULL, dup, s, 2, &req), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_lines(chip, NULL, far, s, 2, &req), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_lines(chip, NULL, ok, s, 0, &req), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_lines(chip, NULL, ok, s, 65, &req), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_lines(NULL, NULL, ok, s, 2, &req), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_lines(chip, NULL, ok, NULL, 2, &req), -EINVAL);
	fake.fail_with = -EBUSY;
	REQUIRE_EQ(pbus_gpio_request_lines(chip, NULL, ok, s, 2, &req), -EBUSY);
	REQUIRE(req == SENTINEL); /* untouched on failure */
	REQUIRE_EQ(pbus_gpio_chip_get_line_info(chip, 32, &(struct pbus_gpio_line_info){ 0 }), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_unwatch_line_info(chip, 99), -EINVAL);
	pbus_gpio_chip_close(chip);
	pbus_hw_set_ioctl_hook(NULL, NULL);
}

static void hot_paths_do_not_allocate(void)
{
	struct pbus_gpio_chip *chip = NULL;
	struct pbus_gpio_request *req = NULL;
	const unsigned int offsets[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct pbus_gpio_line_settings s[8];
	memset(s, 0, sizeof(s));
	for (int i = 0; i < 8; i++)
		s[i].direction = PBUS_GPIO_DIRECTION_OUTPUT;

	memset(&fake, 0, sizeof(fake));
	pbus_hw_set_ioctl_hook(fake_chip, NULL);
	REQUIRE_EQ(pbus_gpio_chip_open("/dev/null", &chip), 0);
	REQUIRE_EQ(pbus_gpio_request_lines(chip, NULL, offsets, s, 8, &req), 0);
	uint64_t bits;
	int v[8];
	/* The counter works: */
	alloc_count = 0;
	alloc_counting = 1;
	void *volatile probe = malloc(16);
	free(probe);
	alloc_counting = 0;
	REQUIRE_EQ(alloc_count, 1);
	alloc_count = 0;
	alloc_counting = 1;
	for (int i = 0; i < 1000; i++) {
		pbus_gpio_request_set_values(req, 0xff, (uint64_t)i);
		pbus_gpio_request_get_values(req, 0xff, &bits);
		pbus_gpio_request_set_value(req, 5, i & 1);
		pbus_gpio_request_get_value(req, 5);
		pbus_gpio_request_get_values_by_offset(req, offsets, 8, v);
	}
	alloc_counting = 0;
	REQUIRE_EQ(alloc_count, 0);
	pbus_gpio_request_release(req);
	pbus_gpio_chip_close(chip);
	pbus_hw_set_ioctl_hook(NULL, NULL);
}

static void open_errors(void)
{
	struct pbus_gpio_chip *chip = SENTINEL;
	REQUIRE_EQ(pbus_gpio_chip_open("/nonexistent/gpiochip0", &chip), -ENOENT);
	REQUIRE_EQ(pbus_gpio_chip_open("/dev/null", &chip), -ENOTTY); /* real ioctl: not a GPIO chip */
	char tmp[] = "/tmp/pbus-hw-test-XXXXXX";
	int fd = mkstemp(tmp);
	REQUIRE(fd >= 0);
	close(fd);
	int r = pbus_gpio_chip_open(tmp, &chip); /* a regular file */
	unlink(tmp);
	REQUIRE_EQ(r, -ENOTTY);
	REQUIRE_EQ(pbus_gpio_chip_open_by_name("../null", &chip), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_open_by_name("gpiochip4711", &chip), -ENOENT);
	REQUIRE_EQ(pbus_gpio_chip_open_by_label("no-such-label-anywhere", &chip), -ENOENT);
	REQUIRE_EQ(pbus_gpio_chip_open_lookup("4711", &chip), -ENOENT);
	REQUIRE_EQ(pbus_gpio_find_line("NO_SUCH_LINE_NAME", NULL, NULL), -ENOENT);
	REQUIRE(chip == SENTINEL);
}

int main(void)
{
	pbus_check_suite("hw/gpio");
	RUN_CASE(encode_mask_indexes_request_lines);
	RUN_CASE(encode_per_line_everything);
	RUN_CASE(encode_64_lines_uniform);
	RUN_CASE(encode_too_many_attributes);
	RUN_CASE(encode_rejects_contradictions);
	RUN_CASE(decode_line_info);
	RUN_CASE(request_through_hook);
	RUN_CASE(request_argument_checks);
	RUN_CASE(hot_paths_do_not_allocate);
	RUN_CASE(open_errors);
	CHECK_EXIT();
}
