/* SPDX-License-Identifier: MIT */
/*
 * gpio.c: `pbus gpio`, GPIO bring-up through libparambus-hw (the character
 * device, uAPI v2): detect, info, get, set, monitor. No instance is needed;
 * -i is accepted and ignored.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <parambus/hw/gpio.h>

#include "format.h"
#include "hw-parse.h"
#include "tool.h"

#define GPIO_FAMILY_HELP                                                              \
	"Usage: pbus [-i NAME] gpio COMMAND [ARGS...]\n"                              \
	"\n"                                                                          \
	"GPIO bring-up through the GPIO character device (no instance needed).\n"     \
	"\n"                                                                          \
	"Commands:\n"                                                                 \
	"  detect                         the GPIO chips: name, label, lines\n"       \
	"  info [CHIP]                    the lines of CHIP (default: all chips)\n"   \
	"  get CHIP LINE...               read lines (requested as inputs)\n"         \
	"  set CHIP LINE=VALUE...         drive lines as outputs (--toggle: blink)\n" \
	"  monitor CHIP LINE...           print edge events\n"                        \
	"\n"                                                                          \
	"CHIP: a path (/dev/gpiochip0), a name (gpiochip0), a number (0) or a label.\n" \
	"LINE: an offset on the chip (3) or a line name (A3).\n"                      \
	"Run 'pbus gpio COMMAND --help' for a command's options.\n"                   \
	"\n"                                                                          \
	"Options:\n"                                                                  \
	TOOL_HELP_HW_COMMON_OPTIONS                                     \
	"\n"                                                                          \
	"Examples:\n"                                                                 \
	"  pbus gpio detect\n"                                                        \
	"  pbus gpio get --bias pull-up gpiochip0 17\n"                               \
	"  pbus gpio set --toggle 500 gpiochip0 LED=1\n"                              \
	TOOL_HELP_SEE("pbus-gpio(1)")

#define GPIO_LINE_OPTIONS_HELP                                                         \
	"  -b, --bias BIAS      pull-up, pull-down, disabled or as-is (the default)\n"  \
	"  -l, --active-low     the lines are active-low: VALUE 1 is the low level\n"

static int gpio_run(struct tool_context *context, int argc, char **argv);

const struct tool_command tool_command_gpio = {
	.name = "gpio",
	.summary = "GPIO chips and lines: detect, info, get, set, monitor",
	.help = GPIO_FAMILY_HELP,
	.run = gpio_run,
};

static const struct tool_command gpio_detect_command = {
	.name = "gpio detect",
	.help = "Usage: pbus [-i NAME] gpio detect\n"
		"\n"
		"List the GPIO chips: name [label] (N lines), like gpiodetect.\n"
		"\n"
		"Options:\n" TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus gpio detect\n"
		"  pbus gpio detect | wc -l\n"
		TOOL_HELP_SEE("pbus-gpio-detect(1)"),
};

static const struct tool_command gpio_info_command = {
	.name = "gpio info",
	.help = "Usage: pbus [-i NAME] gpio info [CHIP]\n"
		"\n"
		"List the lines of CHIP (default: of every chip), one per line:\n"
		"offset, name, consumer, direction and flags (active-low, bias,\n"
		"drive, edge, debounce); '-' for none.\n"
		"\n"
		"Options:\n" TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus gpio info\n"
		"  pbus gpio info gpiochip0\n"
		TOOL_HELP_SEE("pbus-gpio-info(1)"),
};

static const struct tool_command gpio_get_command = {
	.name = "gpio get",
	.help = "Usage: pbus [-i NAME] gpio get [-b BIAS] [-l] CHIP LINE...\n"
		"\n"
		"Request the lines as inputs, print LINE=VALUE (0 or 1) for each, in\n"
		"the order given, and release them.\n"
		"\n"
		"Options:\n" GPIO_LINE_OPTIONS_HELP TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus gpio get gpiochip0 17 27\n"
		"  pbus gpio get --bias pull-up -l pbus-sim0 BUTTON\n"
		TOOL_HELP_SEE("pbus-gpio-get(1)"),
};

static const struct tool_command gpio_set_command = {
	.name = "gpio set",
	.help = "Usage: pbus [-i NAME] gpio set [OPTIONS] CHIP LINE=VALUE...\n"
		"\n"
		"Request the lines as outputs driven to VALUE (0 or 1) from the start\n"
		"(the values are part of the request: no glitch). When pbus releases\n"
		"the lines they are no longer driven and the chip's driver decides\n"
		"what happens to them (most revert to an input); so the value only\n"
		"holds while pbus holds the lines:\n"
		"  --hold-ms N  for N milliseconds (Ctrl-C releases early);\n"
		"  otherwise    until Ctrl-C when stdin is a terminal, else pbus\n"
		"               exits (and releases) right after setting.\n"
		"With --toggle the lines are inverted after each PERIOD in turn, as\n"
		"gpioset -t does: the sequence repeats until Ctrl-C or the end of\n"
		"--hold-ms, unless its last PERIOD is 0, which ends the toggling (then\n"
		"the lines are held as above).\n"
		"\n"
		"Options:\n"
		"      --hold-ms N      hold the lines for N milliseconds\n"
		"      --toggle PERIOD[,PERIOD...]  invert the lines after each PERIOD\n"
		"                       (ms, or with a unit: 500us, 20ms, 1s)\n"
		"      --drive DRIVE    push-pull (the default), open-drain or open-source\n"
		GPIO_LINE_OPTIONS_HELP TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus gpio set --hold-ms 1000 gpiochip0 17=1\n"
		"  pbus gpio set --drive open-drain -l pbus-sim0 RESET=1\n"
		"  pbus gpio set --toggle 100,900 gpiochip0 LED=1\n"
		TOOL_HELP_SEE("pbus-gpio-set(1)"),
};

static const struct tool_command gpio_monitor_command = {
	.name = "gpio monitor",
	.help = "Usage: pbus [-i NAME] gpio monitor [OPTIONS] CHIP LINE...\n"
		"\n"
		"Request the lines as inputs with edge detection and print one line per\n"
		"event: the kernel timestamp (CLOCK_MONOTONIC, seconds), the line offset,\n"
		"the line as given, the edge (rising/falling) and the sequence number:\n"
		"  12.345678901 3 A3 rising 1\n"
		"Runs until Ctrl-C, until N events with --count, or -w SECONDS.\n"
		"\n"
		"Options:\n"
		"      --edge EDGE      rising, falling or both (default both)\n"
		"      --count N        exit after N events\n"
		"  -w, --timeout SECONDS  stop after SECONDS: status 0, or 5 if --count\n"
		"                       events had not come by then\n"
		GPIO_LINE_OPTIONS_HELP TOOL_HELP_HW_COMMON_OPTIONS
		"\n"
		"Examples:\n"
		"  pbus gpio monitor gpiochip0 17\n"
		"  pbus gpio monitor --edge falling --bias pull-up pbus-sim0 BUTTON\n"
		"  pbus gpio monitor --count 1 -w 10 gpiochip0 17\n"
		TOOL_HELP_SEE("pbus-gpio-monitor(1)"),
};

/* ---- helpers ------------------------------------------------------------ */

static volatile sig_atomic_t gpio_stop;

static void gpio_on_signal(int signal_number)
{
	(void)signal_number;
	gpio_stop = 1;
}

/* SIGINT/SIGTERM set gpio_stop and interrupt blocking calls (no SA_RESTART). */
static void gpio_catch_signals(void)
{
	struct sigaction action;

	memset(&action, 0, sizeof(action));
	action.sa_handler = gpio_on_signal;
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
}

/* The gpio commands' own options. Every command parses all of them, so
 * that one that does not apply to it is named as such, not as unknown. */
enum {
	GPIO_OPTION_HOLD = 1u << 0,
	GPIO_OPTION_EDGE = 1u << 1,
	GPIO_OPTION_COUNT = 1u << 2,
	GPIO_OPTION_BIAS = 1u << 3,
	GPIO_OPTION_ACTIVE_LOW = 1u << 4,
	GPIO_OPTION_DRIVE = 1u << 5,
	GPIO_OPTION_TOGGLE = 1u << 6,
	GPIO_OPTION_TIMEOUT = 1u << 7,
};

struct gpio_options {
	const char *hold_ms;
	const char *edge;
	const char *count;
	const char *timeout;
	const char *toggle;
	enum pbus_gpio_bias bias;
	enum pbus_gpio_drive drive;
	bool active_low;
};

/* Which commands each option applies to, for the refusal. */
static const struct {
	int letter;
	unsigned bit;
	const char *name;
	const char *applies;
} gpio_option_names[] = {
	{'H', GPIO_OPTION_HOLD, "--hold-ms", "gpio set"},
	{'E', GPIO_OPTION_EDGE, "--edge", "gpio monitor"},
	{'C', GPIO_OPTION_COUNT, "--count", "gpio monitor"},
	{'b', GPIO_OPTION_BIAS, "--bias", "gpio get, set and monitor"},
	{'l', GPIO_OPTION_ACTIVE_LOW, "--active-low", "gpio get, set and monitor"},
	{'D', GPIO_OPTION_DRIVE, "--drive", "gpio set"},
	{'T', GPIO_OPTION_TOGGLE, "--toggle", "gpio set"},
	{'w', GPIO_OPTION_TIMEOUT, "--timeout", "gpio monitor"},
};

/* Parse the options of a gpio command: the common ones and those of
 * @allowed (GPIO_OPTION_*), into @values. Returns -1 to continue, else an
 * exit status. */
static int gpio_parse_options(struct tool_context *context, const struct tool_command *command,
			      unsigned allowed, struct gpio_options *values, int argc, char **argv)
{
	static const struct option options[] = {
		{"hold-ms", required_argument, NULL, 'H'},
		{"edge", required_argument, NULL, 'E'},
		{"count", required_argument, NULL, 'C'},
		{"bias", required_argument, NULL, 'b'},
		{"active-low", no_argument, NULL, 'l'},
		{"drive", required_argument, NULL, 'D'},
		{"toggle", required_argument, NULL, 'T'},
		{"timeout", required_argument, NULL, 'w'},
		TOOL_COMMON_LONG_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	int option, status;

	while ((option = tool_next_option(context, command, argc, argv,
					  ":" TOOL_COMMON_SHORT_OPTIONS "b:lw:", options, &status))) {
		for (size_t i = 0; i < sizeof(gpio_option_names) / sizeof(gpio_option_names[0]); i++)
			if (gpio_option_names[i].letter == option && !(allowed & gpio_option_names[i].bit))
				return tool_usage_error(command, "%s applies only to %s",
							gpio_option_names[i].name,
							gpio_option_names[i].applies);
		switch (option) {
		case 'H':
			values->hold_ms = optarg;
			break;
		case 'E':
			values->edge = optarg;
			break;
		case 'C':
			values->count = optarg;
			break;
		case 'w':
			values->timeout = optarg;
			break;
		case 'T':
			values->toggle = optarg;
			break;
		case 'l':
			values->active_low = true;
			break;
		case 'b':
			if (!strcmp(optarg, "pull-up"))
				values->bias = PBUS_GPIO_BIAS_PULL_UP;
			else if (!strcmp(optarg, "pull-down"))
				values->bias = PBUS_GPIO_BIAS_PULL_DOWN;
			else if (!strcmp(optarg, "disabled"))
				values->bias = PBUS_GPIO_BIAS_DISABLED;
			else if (!strcmp(optarg, "as-is"))
				values->bias = PBUS_GPIO_BIAS_AS_IS;
			else
				return tool_usage_error(command, "--bias: expected pull-up, pull-down, "
							"disabled or as-is, not '%s'", optarg);
			break;
		case 'D':
			if (!strcmp(optarg, "push-pull"))
				values->drive = PBUS_GPIO_DRIVE_PUSH_PULL;
			else if (!strcmp(optarg, "open-drain"))
				values->drive = PBUS_GPIO_DRIVE_OPEN_DRAIN;
			else if (!strcmp(optarg, "open-source"))
				values->drive = PBUS_GPIO_DRIVE_OPEN_SOURCE;
			else
				return tool_usage_error(command, "--drive: expected push-pull, open-drain "
							"or open-source, not '%s'", optarg);
			break;
		}
	}
	return status;
}

/* The line settings every requested line gets from the options. */
static void gpio_apply_options(const struct gpio_options *o, struct pbus_gpio_line_settings *s)
{
	s->bias = o->bias;
	s->active_low = o->active_low;
}

/* Open @name as a chip; on failure print the error and return the status. */
static int gpio_open_chip(const char *name, struct pbus_gpio_chip **ret_chip)
{
	int r = pbus_gpio_chip_open_lookup(name, ret_chip);

	if (r == 0)
		return TOOL_EXIT_OK;
	if (r == -ENOENT || r == -ENOTTY || r == -ENODEV) {
		tool_error("gpio: no chip '%s'", name);
		return TOOL_EXIT_NO_INSTANCE;
	}
	tool_error("gpio: chip '%s': %s", name, pbus_hw_strerror(r));
	return TOOL_EXIT_FAILURE;
}

static bool gpio_is_number(const char *text)
{
	if (!*text)
		return false;
	for (const char *p = text; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* Resolve @line (an offset or a name) on @chip; print the error (prefixed
 * by @what) and return -1 when it is not there. */
static int gpio_resolve_line(struct pbus_gpio_chip *chip, unsigned num_lines, const char *what,
			     const char *line, unsigned *ret_offset)
{
	unsigned long long offset;
	int r;

	if (gpio_is_number(line)) {
		if (tool_parse_unsigned(line, UINT32_MAX, &offset) < 0 || offset >= num_lines) {
			tool_error("%s: no line %s (the chip has %u lines)", what, line, num_lines);
			return -1;
		}
		*ret_offset = (unsigned)offset;
		return 0;
	}
	r = pbus_gpio_chip_find_line(chip, line, ret_offset);
	if (r == -ENOENT || r == -EINVAL) {
		tool_error("%s: no line named '%s'", what, line);
		return -1;
	}
	if (r < 0) {
		tool_error("%s: line '%s': %s", what, line, pbus_hw_strerror(r));
		return -1;
	}
	return 0;
}

static int gpio_request_error(const char *what, int r)
{
	if (r == -EBUSY)
		tool_error("%s: a line is already in use (EBUSY)", what);
	else
		tool_error("%s: %s", what, pbus_hw_strerror(r));
	return r == -ENODEV ? TOOL_EXIT_NO_INSTANCE : TOOL_EXIT_FAILURE;
}

/* "gpio get pbus-sim0 A3 ..." for messages. */
static void gpio_what(char *buf, size_t size, const char *command, int argc, char **argv)
{
	size_t used = (size_t)snprintf(buf, size, "%s", command);

	for (int i = 0; i < argc && used < size; i++) {
		if (used + strlen(argv[i]) + 2 >= size) {
			snprintf(buf + used, size - used, " ...");
			break;
		}
		used += (size_t)snprintf(buf + used, size - used, " %s", argv[i]);
	}
}

/* ---- detect ------------------------------------------------------------- */

static int gpio_chip_number(const char *name)
{
	unsigned long long n;

	if (strncmp(name, "gpiochip", 8) || tool_parse_unsigned(name + 8, 1000000, &n) < 0)
		return -1;
	return (int)n;
}

static int gpio_compare_numbers(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The numbers N of the /dev/gpiochipN, sorted; returns how many (<= max). */
static size_t gpio_list_chips(int *numbers, size_t max)
{
	struct dirent *entry;
	size_t n = 0;
	DIR *dir = opendir("/dev");

	if (!dir)
		return 0;
	while ((entry = readdir(dir)) && n < max) {
		int number = gpio_chip_number(entry->d_name);

		if (number >= 0)
			numbers[n++] = number;
	}
	closedir(dir);
	qsort(numbers, n, sizeof(*numbers), gpio_compare_numbers);
	return n;
}

static int gpio_detect(struct tool_context *context, int argc, char **argv)
{
	int numbers[256];
	size_t count;
	int status = -1;
	struct gpio_options values = {0};

	status = gpio_parse_options(context, &gpio_detect_command, 0, &values, argc, argv);
	if (status >= 0)
		return status;
	if (optind < argc)
		return tool_usage_error(&gpio_detect_command, "unexpected argument '%s'", argv[optind]);
	count = gpio_list_chips(numbers, 256);
	for (size_t i = 0; i < count; i++) {
		struct pbus_gpio_chip *chip;
		struct pbus_gpio_chip_info info;
		char path[64];
		int r;

		snprintf(path, sizeof(path), "/dev/gpiochip%d", numbers[i]);
		r = pbus_gpio_chip_open(path, &chip);
		if (r == 0) {
			r = pbus_gpio_chip_get_info(chip, &info);
			pbus_gpio_chip_close(chip);
		}
		if (r < 0) {
			tool_error("gpio detect: %s: %s", path, pbus_hw_strerror(r));
			return TOOL_EXIT_FAILURE;
		}
		printf("%s [%s] (%u lines)\n", info.name, info.label, info.num_lines);
	}
	return TOOL_EXIT_OK;
}

/* ---- info --------------------------------------------------------------- */

static void gpio_flags_text(const struct pbus_gpio_line_settings *s, char *buf, size_t size)
{
	static const char *const bias[] = {"", "bias=disabled", "bias=pull-up", "bias=pull-down"};
	static const char *const drive[] = {"", "drive=open-drain", "drive=open-source"};
	static const char *const edge[] = {"", "edge=rising", "edge=falling", "edge=both"};
	size_t used = 0;

	buf[0] = 0;
#define GPIO_ADD(text)                                                                          \
	do {                                                                                    \
		if (*(text) && used < size)                                                     \
			used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? "," : "", \
						 (text));                                       \
	} while (0)
	if (s->active_low)
		GPIO_ADD("active-low");
	if ((unsigned)s->bias < 4)
		GPIO_ADD(bias[s->bias]);
	if ((unsigned)s->drive < 3)
		GPIO_ADD(drive[s->drive]);
	if ((unsigned)s->edge < 4)
		GPIO_ADD(edge[s->edge]);
#undef GPIO_ADD
	if (s->debounce_period_us && used < size)
		used += (size_t)snprintf(buf + used, size - used, "%sdebounce=%" PRIu32 "us",
					 used ? "," : "", s->debounce_period_us);
	if (!used)
		snprintf(buf, size, "-");
}

static int gpio_print_chip_lines(const char *what, struct pbus_gpio_chip *chip)
{
	struct pbus_gpio_chip_info info;
	int r = pbus_gpio_chip_get_info(chip, &info);

	if (r < 0) {
		tool_error("%s: %s", what, pbus_hw_strerror(r));
		return TOOL_EXIT_FAILURE;
	}
	printf("%s [%s] (%u lines)\n", info.name, info.label, info.num_lines);
	for (unsigned offset = 0; offset < info.num_lines; offset++) {
		struct pbus_gpio_line_info line;
		char flags[128];

		r = pbus_gpio_chip_get_line_info(chip, offset, &line);
		if (r < 0) {
			tool_error("%s: line %u: %s", what, offset, pbus_hw_strerror(r));
			return TOOL_EXIT_FAILURE;
		}
		gpio_flags_text(&line.settings, flags, sizeof(flags));
		printf("  %3u  %-12s %-12s %-6s %s\n", offset, line.name[0] ? line.name : "-",
		       line.used ? (line.consumer[0] ? line.consumer : "kernel") : "-",
		       line.settings.direction == PBUS_GPIO_DIRECTION_OUTPUT ? "output" : "input",
		       flags);
	}
	return TOOL_EXIT_OK;
}

static int gpio_info(struct tool_context *context, int argc, char **argv)
{
	struct gpio_options values = {0};
	struct pbus_gpio_chip *chip;
	int status = gpio_parse_options(context, &gpio_info_command, 0, &values, argc, argv);
	int numbers[256];
	size_t count;

	if (status >= 0)
		return status;
	if (argc - optind > 1)
		return tool_usage_error(&gpio_info_command, "expected at most one CHIP");
	if (optind < argc) {
		char what[128];

		snprintf(what, sizeof(what), "gpio info %s", argv[optind]);
		status = gpio_open_chip(argv[optind], &chip);
		if (status)
			return status;
		status = gpio_print_chip_lines(what, chip);
		pbus_gpio_chip_close(chip);
		return status;
	}
	count = gpio_list_chips(numbers, 256);
	for (size_t i = 0; i < count; i++) {
		char path[64];
		int r;

		snprintf(path, sizeof(path), "/dev/gpiochip%d", numbers[i]);
		r = pbus_gpio_chip_open(path, &chip);
		if (r < 0) {
			tool_error("gpio info: %s: %s", path, pbus_hw_strerror(r));
			return TOOL_EXIT_FAILURE;
		}
		status = gpio_print_chip_lines(path, chip);
		pbus_gpio_chip_close(chip);
		if (status)
			return status;
	}
	return TOOL_EXIT_OK;
}

/* ---- get / set / monitor: request lines --------------------------------- */

/*
 * Open CHIP (args[0]) and resolve the lines args[1..]: for "set", each
 * argument is LINE=VALUE and the value goes to values[i]. Fills offsets and
 * returns -1 on success, else the exit status (after the message).
 */
static int gpio_prepare(const struct tool_command *command, int nargs, char **args, bool with_value,
			struct pbus_gpio_chip **ret_chip, unsigned *offsets, int *values,
			size_t *ret_count)
{
	struct pbus_gpio_chip_info info;
	struct pbus_gpio_chip *chip;
	char what[256];
	int status, r;
	size_t count;

	if (nargs < 2)
		return tool_usage_error(command, nargs < 1 ? "no CHIP given" : "no LINE given");
	if (nargs - 1 > PBUS_GPIO_REQUEST_LINES_MAX)
		return tool_usage_error(command, "at most %d lines", PBUS_GPIO_REQUEST_LINES_MAX);
	count = (size_t)(nargs - 1);
	/* Check the syntax of LINE=VALUE before touching the chip. */
	if (with_value) {
		for (size_t i = 0; i < count; i++) {
			const char *arg = args[i + 1];
			const char *eq = strchr(arg, '=');

			if (!eq || eq == arg)
				return tool_usage_error(command, "expected LINE=VALUE, not '%s'", arg);
			if (strcmp(eq + 1, "0") && strcmp(eq + 1, "1")) {
				tool_error("%s %s %s: value must be 0 or 1", command->name, args[0], arg);
				return TOOL_EXIT_FAILURE;
			}
			values[i] = eq[1] == '1';
		}
	}
	status = gpio_open_chip(args[0], &chip);
	if (status)
		return status;
	r = pbus_gpio_chip_get_info(chip, &info);
	if (r < 0) {
		tool_error("%s %s: %s", command->name, args[0], pbus_hw_strerror(r));
		pbus_gpio_chip_close(chip);
		return TOOL_EXIT_FAILURE;
	}
	for (size_t i = 0; i < count; i++) {
		char line[PBUS_GPIO_NAME_SIZE * 2];
		const char *arg = args[i + 1];
		size_t length = with_value ? (size_t)(strchr(arg, '=') - arg) : strlen(arg);

		if (length >= sizeof(line))
			length = sizeof(line) - 1;
		memcpy(line, arg, length);
		line[length] = 0;
		snprintf(what, sizeof(what), "%s %s %s", command->name, args[0], line);
		if (gpio_resolve_line(chip, info.num_lines, what, line, &offsets[i]) < 0) {
			pbus_gpio_chip_close(chip);
			return TOOL_EXIT_FAILURE;
		}
		for (size_t j = 0; j < i; j++) {
			if (offsets[j] == offsets[i]) {
				tool_error("%s: line %u given twice", what, offsets[i]);
				pbus_gpio_chip_close(chip);
				return TOOL_EXIT_FAILURE;
			}
		}
	}
	*ret_chip = chip;
	*ret_count = count;
	return -1;
}

static int gpio_get(struct tool_context *context, int argc, char **argv)
{
	struct pbus_gpio_line_settings settings[PBUS_GPIO_REQUEST_LINES_MAX];
	unsigned offsets[PBUS_GPIO_REQUEST_LINES_MAX];
	int values[PBUS_GPIO_REQUEST_LINES_MAX];
	struct pbus_gpio_request_config config = {.consumer = "pbus"};
	struct gpio_options options = {0};
	struct pbus_gpio_request *request;
	struct pbus_gpio_chip *chip;
	char what[256];
	size_t count;
	int status, r;

	status = gpio_parse_options(context, &gpio_get_command, GPIO_OPTION_BIAS | GPIO_OPTION_ACTIVE_LOW,
				    &options, argc, argv);
	if (status >= 0)
		return status;
	status = gpio_prepare(&gpio_get_command, argc - optind, argv + optind, false, &chip, offsets,
			      NULL, &count);
	if (status >= 0)
		return status;
	gpio_what(what, sizeof(what), "gpio get", argc - optind, argv + optind);
	memset(settings, 0, sizeof(settings));
	for (size_t i = 0; i < count; i++) {
		settings[i].direction = PBUS_GPIO_DIRECTION_INPUT;
		gpio_apply_options(&options, &settings[i]);
	}
	r = pbus_gpio_request_lines(chip, &config, offsets, settings, count, &request);
	pbus_gpio_chip_close(chip);
	if (r < 0)
		return gpio_request_error(what, r);
	r = pbus_gpio_request_get_values_by_offset(request, offsets, count, values);
	pbus_gpio_request_release(request);
	if (r < 0) {
		tool_error("%s: %s", what, pbus_hw_strerror(r));
		return TOOL_EXIT_FAILURE;
	}
	for (size_t i = 0; i < count; i++)
		printf("%s=%d\n", argv[optind + 1 + (int)i], values[i]);
	return TOOL_EXIT_OK;
}

/* Sleep until CLOCK_MONOTONIC @until_ns or a stop signal; false if stopped. */
static bool gpio_sleep_until(int64_t until_ns)
{
	struct timespec ts = {(time_t)(until_ns / 1000000000), (long)(until_ns % 1000000000)};

	while (!gpio_stop) {
		int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (r == 0)
			return !gpio_stop;
		if (r != EINTR)
			return false;
	}
	return false;
}

static int gpio_set(struct tool_context *context, int argc, char **argv)
{
	struct pbus_gpio_line_settings settings[PBUS_GPIO_REQUEST_LINES_MAX];
	unsigned offsets[PBUS_GPIO_REQUEST_LINES_MAX];
	int values[PBUS_GPIO_REQUEST_LINES_MAX];
	uint64_t periods[TOOL_GPIO_PERIODS_MAX];
	struct pbus_gpio_request_config config = {.consumer = "pbus"};
	struct gpio_options options = {0};
	struct pbus_gpio_request *request;
	struct pbus_gpio_chip *chip;
	unsigned long long hold_ms = 0;
	int64_t start, hold_end = 0;
	int period_count = 0;
	char what[256];
	size_t count;
	int status, r;

	status = gpio_parse_options(context, &gpio_set_command,
				    GPIO_OPTION_HOLD | GPIO_OPTION_BIAS | GPIO_OPTION_ACTIVE_LOW |
					    GPIO_OPTION_DRIVE | GPIO_OPTION_TOGGLE,
				    &options, argc, argv);
	if (status >= 0)
		return status;
	if (options.hold_ms && tool_parse_unsigned(options.hold_ms, 86400000ULL * 365, &hold_ms) < 0)
		return tool_usage_error(&gpio_set_command, "--hold-ms: not a number of milliseconds: '%s'",
					options.hold_ms);
	if (options.toggle && (period_count = tool_gpio_parse_periods(options.toggle, periods)) < 0)
		return tool_usage_error(&gpio_set_command, "--toggle: not a list of periods (100,900, "
					"500us, 1s; a 0 only last): '%s'", options.toggle);
	status = gpio_prepare(&gpio_set_command, argc - optind, argv + optind, true, &chip, offsets,
			      values, &count);
	if (status >= 0)
		return status;
	gpio_what(what, sizeof(what), "gpio set", argc - optind, argv + optind);
	memset(settings, 0, sizeof(settings));
	for (size_t i = 0; i < count; i++) {
		settings[i].direction = PBUS_GPIO_DIRECTION_OUTPUT;
		settings[i].output_value = values[i];
		settings[i].drive = options.drive;
		gpio_apply_options(&options, &settings[i]);
	}
	gpio_catch_signals();
	r = pbus_gpio_request_lines(chip, &config, offsets, settings, count, &request);
	pbus_gpio_chip_close(chip);
	if (r < 0)
		return gpio_request_error(what, r);
	start = tool_monotonic_ns();
	if (options.hold_ms)
		hold_end = start + (int64_t)hold_ms * 1000000;
	if (period_count > 0) {
		/* gpioset -t: invert after each period in turn, from absolute
		 * deadlines (no drift); a last period of 0 ends the sequence. */
		int64_t next = start;

		for (int k = 0; !gpio_stop; k = (k + 1) % period_count) {
			if (periods[k] == 0)
				break;
			next += (int64_t)periods[k] * 1000;
			if (hold_end && next >= hold_end)
				break;
			if (!gpio_sleep_until(next))
				break;
			for (size_t i = 0; i < count; i++)
				values[i] = !values[i];
			r = pbus_gpio_request_set_values_by_offset(request, offsets, count, values);
			if (r < 0) {
				tool_error("%s: %s", what, pbus_hw_strerror(r));
				pbus_gpio_request_release(request);
				return r == -ENODEV ? TOOL_EXIT_NO_INSTANCE : TOOL_EXIT_FAILURE;
			}
		}
	}
	if (options.hold_ms) {
		gpio_sleep_until(hold_end);
	} else if (isatty(STDIN_FILENO) && !gpio_stop) {
		sigset_t block, old;

		/* Blocked until sigsuspend(): a signal cannot slip in between
		 * the check and the wait. */
		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGTERM);
		sigprocmask(SIG_BLOCK, &block, &old);
		printf("holding the lines; Ctrl-C releases them\n");
		fflush(stdout);
		while (!gpio_stop)
			sigsuspend(&old);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	pbus_gpio_request_release(request);
	return TOOL_EXIT_OK;
}

static int gpio_monitor(struct tool_context *context, int argc, char **argv)
{
	struct pbus_gpio_line_settings settings[PBUS_GPIO_REQUEST_LINES_MAX];
	unsigned offsets[PBUS_GPIO_REQUEST_LINES_MAX];
	struct pbus_gpio_request_config config = {.consumer = "pbus"};
	struct gpio_options options = {0};
	enum pbus_gpio_edge edge = PBUS_GPIO_EDGE_BOTH;
	struct pbus_gpio_request *request;
	struct pbus_gpio_chip *chip;
	unsigned long long count_max = 0, seen = 0;
	unsigned timeout_ms = 0;
	int64_t deadline = 0;
	char what[256];
	size_t count;
	int status, r;

	status = gpio_parse_options(context, &gpio_monitor_command,
				    GPIO_OPTION_EDGE | GPIO_OPTION_COUNT | GPIO_OPTION_TIMEOUT |
					    GPIO_OPTION_BIAS | GPIO_OPTION_ACTIVE_LOW,
				    &options, argc, argv);
	if (status >= 0)
		return status;
	if (options.edge) {
		if (!strcmp(options.edge, "rising"))
			edge = PBUS_GPIO_EDGE_RISING;
		else if (!strcmp(options.edge, "falling"))
			edge = PBUS_GPIO_EDGE_FALLING;
		else if (!strcmp(options.edge, "both"))
			edge = PBUS_GPIO_EDGE_BOTH;
		else
			return tool_usage_error(&gpio_monitor_command,
						"--edge: expected rising, falling or both, not '%s'",
						options.edge);
	}
	if (options.count && (tool_parse_unsigned(options.count, UINT32_MAX, &count_max) < 0 ||
			      count_max == 0))
		return tool_usage_error(&gpio_monitor_command, "--count: not a positive number: '%s'",
					options.count);
	if (options.timeout && tool_timeout_option(&gpio_monitor_command, options.timeout, &timeout_ms))
		return TOOL_EXIT_USAGE;
	status = gpio_prepare(&gpio_monitor_command, argc - optind, argv + optind, false, &chip,
			      offsets, NULL, &count);
	if (status >= 0)
		return status;
	gpio_what(what, sizeof(what), "gpio monitor", argc - optind, argv + optind);
	memset(settings, 0, sizeof(settings));
	for (size_t i = 0; i < count; i++) {
		settings[i].direction = PBUS_GPIO_DIRECTION_INPUT;
		settings[i].edge = edge;
		gpio_apply_options(&options, &settings[i]);
	}
	gpio_catch_signals();
	r = pbus_gpio_request_lines(chip, &config, offsets, settings, count, &request);
	pbus_gpio_chip_close(chip);
	if (r < 0)
		return gpio_request_error(what, r);
	if (timeout_ms)
		deadline = tool_monotonic_ns() + (int64_t)timeout_ms * 1000000;
	status = TOOL_EXIT_OK;
	while (!gpio_stop && (!count_max || seen < count_max)) {
		struct pbus_gpio_edge_event events[16];
		size_t want = 16;

		if (deadline) {
			int64_t left = deadline - tool_monotonic_ns();

			if (left <= 0) {
				char seconds[32];

				if (count_max) {
					tool_seconds_text(timeout_ms, seconds, sizeof(seconds));
					tool_error("%s: timed out after %s with %llu of %llu events", what,
						   seconds, seen, count_max);
					status = TOOL_EXIT_TIMEOUT;
				}
				break;
			}
			r = pbus_gpio_request_wait_events(request, (int)((left + 999999) / 1000000));
			if (r == 0 || r == -EINTR)
				continue;
			if (r < 0) {
				tool_error("%s: %s", what, pbus_hw_strerror(r));
				status = TOOL_EXIT_FAILURE;
				break;
			}
		}
		if (count_max && count_max - seen < want)
			want = (size_t)(count_max - seen);
		r = pbus_gpio_request_read_events(request, events, want);
		if (r == -EINTR)
			continue;
		if (r < 0) {
			tool_error("%s: %s", what, pbus_hw_strerror(r));
			status = r == -ENODEV ? TOOL_EXIT_NO_INSTANCE : TOOL_EXIT_FAILURE;
			break;
		}
		for (int i = 0; i < r; i++) {
			const char *name = "?";

			for (size_t j = 0; j < count; j++)
				if (offsets[j] == events[i].offset)
					name = argv[optind + 1 + (int)j];
			printf("%" PRIu64 ".%09" PRIu64 " %" PRIu32 " %s %s %" PRIu32 "\n",
			       events[i].timestamp_ns / 1000000000u, events[i].timestamp_ns % 1000000000u,
			       events[i].offset, name,
			       events[i].type == PBUS_GPIO_EDGE_EVENT_RISING ? "rising" : "falling",
			       events[i].seqno);
		}
		fflush(stdout);
		seen += (unsigned)r;
	}
	pbus_gpio_request_release(request);
	return status;
}

/* ---- dispatch ----------------------------------------------------------- */

static int gpio_run(struct tool_context *context, int argc, char **argv)
{
	static const struct tool_subcommand subs[] = {
		{"detect", gpio_detect}, {"info", gpio_info},       {"get", gpio_get},
		{"set", gpio_set},       {"monitor", gpio_monitor},
	};

	return tool_run_subcommand(context, &tool_command_gpio, subs,
				   sizeof(subs) / sizeof(subs[0]), argc, argv);
}
