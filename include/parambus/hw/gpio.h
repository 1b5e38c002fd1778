/* SPDX-License-Identifier: MIT */
/*
 * parambus/hw/gpio.h - GPIO lines through the kernel's character device
 * (uAPI v2, /dev/gpiochipN, Linux >= 5.10).
 *
 * Objects:
 *  - struct pbus_gpio_chip: an open /dev/gpiochipN.  Gives chip and line
 *    information, watches lines for changes of their configuration, and
 *    requests lines.
 *  - struct pbus_gpio_request: a set of up to PBUS_GPIO_REQUEST_LINES_MAX
 *    lines of one chip, held together by one file descriptor.  Values are
 *    read and written for any subset of its lines with one ioctl; edge
 *    events of all its lines arrive on that one descriptor, ready for the
 *    caller's poll()/epoll loop.  A request lives independently of the chip
 *    it came from: the chip may be closed while the request is in use.
 *
 * Indexes versus offsets.  A line's *offset* is its number on the chip (what
 * the kernel and the schematic call it).  A line's *index* is its position in
 * the request: the lines are indexed 0..n-1 in the order of the offsets array
 * given to pbus_gpio_request_lines().  Value masks (bit i = index i) and the
 * settings arrays use indexes, exactly like the kernel's v2 uAPI; the
 * *_by_offset functions and event records use offsets.
 *
 * No glitch: lines requested as outputs are driven to their
 * pbus_gpio_line_settings.output_value by the request itself, so an output
 * configured high is never driven low first.
 *
 * Threads: one thread per object at a time (see common.h).  Reading events
 * from one thread while another sets values on the same request is allowed
 * (they are independent system calls on one descriptor and the library keeps
 * no state between them); closing a request while another thread uses it is
 * not.
 */
#ifndef PARAMBUS_HW_GPIO_H
#define PARAMBUS_HW_GPIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <parambus/hw/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most lines in one request (the kernel's GPIO_V2_LINES_MAX). */
#define PBUS_GPIO_REQUEST_LINES_MAX 64
/** Size of the name, label and consumer strings, NUL included. */
#define PBUS_GPIO_NAME_SIZE 32

struct pbus_gpio_chip;
struct pbus_gpio_request;

enum pbus_gpio_direction {
	PBUS_GPIO_DIRECTION_AS_IS = 0, /**< leave the direction as it is */
	PBUS_GPIO_DIRECTION_INPUT,
	PBUS_GPIO_DIRECTION_OUTPUT,
};

enum pbus_gpio_bias {
	PBUS_GPIO_BIAS_AS_IS = 0, /**< leave the bias as it is */
	PBUS_GPIO_BIAS_DISABLED,
	PBUS_GPIO_BIAS_PULL_UP,
	PBUS_GPIO_BIAS_PULL_DOWN,
};

enum pbus_gpio_drive {
	PBUS_GPIO_DRIVE_PUSH_PULL = 0,
	PBUS_GPIO_DRIVE_OPEN_DRAIN,
	PBUS_GPIO_DRIVE_OPEN_SOURCE,
};

enum pbus_gpio_edge {
	PBUS_GPIO_EDGE_NONE = 0,
	PBUS_GPIO_EDGE_RISING,
	PBUS_GPIO_EDGE_FALLING,
	PBUS_GPIO_EDGE_BOTH,
};

/** Clock of the timestamps of edge events. */
enum pbus_gpio_clock {
	PBUS_GPIO_CLOCK_MONOTONIC = 0, /**< CLOCK_MONOTONIC (the default) */
	PBUS_GPIO_CLOCK_REALTIME,      /**< CLOCK_REALTIME (Linux >= 5.11) */
	PBUS_GPIO_CLOCK_HTE,           /**< hardware timestamp engine (Linux >= 5.19 with CONFIG_HTE) */
};

/**
 * struct pbus_gpio_line_settings - how one line is to be configured.
 *
 * Zero-initialise it, then set what matters: the zero value of every field
 * is "as is / none / push-pull / monotonic / active-high / inactive / no
 * debounce".  The combinations the kernel forbids are refused with -EINVAL
 * before any ioctl: edge detection and debounce need an input; open-drain,
 * open-source and an output value need an output; a bias needs an explicit
 * direction.
 */
struct pbus_gpio_line_settings {
	enum pbus_gpio_direction direction;
	enum pbus_gpio_bias bias;
	enum pbus_gpio_drive drive;
	enum pbus_gpio_edge edge;
	enum pbus_gpio_clock clock;
	bool active_low;
	/** Logical value (0 or 1, after active_low) an output starts with. */
	int output_value;
	/** Debounce period in microseconds; 0 for none. */
	uint32_t debounce_period_us;
};

/** Information about a chip (GPIO_GET_CHIPINFO_IOCTL). */
struct pbus_gpio_chip_info {
	char name[PBUS_GPIO_NAME_SIZE];  /**< kernel name, e.g. "gpiochip0" */
	char label[PBUS_GPIO_NAME_SIZE]; /**< driver label, e.g. "pinctrl-bcm2711" */
	unsigned int num_lines;
};

/** Information about one line (GPIO_V2_GET_LINEINFO_IOCTL). */
struct pbus_gpio_line_info {
	unsigned int offset;
	char name[PBUS_GPIO_NAME_SIZE];     /**< empty if the line is unnamed */
	char consumer[PBUS_GPIO_NAME_SIZE]; /**< empty if not requested */
	bool used;                          /**< requested by anyone, kernel included */
	/** Current configuration; output_value is always 0 (not reported). */
	struct pbus_gpio_line_settings settings;
};

/** Kind of a line-info change (enum gpio_v2_line_changed_type). */
enum pbus_gpio_info_event_type {
	PBUS_GPIO_INFO_EVENT_REQUESTED = 1,
	PBUS_GPIO_INFO_EVENT_RELEASED = 2,
	PBUS_GPIO_INFO_EVENT_RECONFIGURED = 3,
};

/** A line-info change reported on a chip that watches the line. */
struct pbus_gpio_info_event {
	enum pbus_gpio_info_event_type type;
	uint64_t timestamp_ns; /**< CLOCK_MONOTONIC */
	struct pbus_gpio_line_info info;
};

/** Kind of an edge (enum gpio_v2_line_event_id). */
enum pbus_gpio_edge_event_type {
	PBUS_GPIO_EDGE_EVENT_RISING = 1,
	PBUS_GPIO_EDGE_EVENT_FALLING = 2,
};

/**
 * struct pbus_gpio_edge_event - one edge, exactly as the kernel reports it.
 *
 * This struct has the layout of the kernel's struct gpio_v2_line_event
 * (48 bytes), so events are read straight into the caller's array.
 */
struct pbus_gpio_edge_event {
	uint64_t timestamp_ns; /**< in the request's event clock */
	uint32_t type;         /**< enum pbus_gpio_edge_event_type */
	uint32_t offset;       /**< the line's offset on the chip */
	uint32_t seqno;        /**< sequence number among all lines of the request */
	uint32_t line_seqno;   /**< sequence number among this line's events */
	uint32_t reserved[6];
};

/** Options of a request that are not per line. */
struct pbus_gpio_request_config {
	/** Consumer name shown in line info; NULL: "parambus". Truncated to 31 bytes. */
	const char *consumer;
	/** Kernel event buffer size in events; 0: kernel default (16 per line). */
	unsigned int event_buffer_size;
	/** Open the request's descriptor O_NONBLOCK (reads return -EAGAIN). */
	bool nonblocking;
};

/* ---- chips ------------------------------------------------------------ */

/**
 * pbus_gpio_chip_open() - open a GPIO chip by device path.
 * @path: e.g. "/dev/gpiochip0".
 * @ret_chip: the open chip; close it with pbus_gpio_chip_close().
 *
 * Return: 0, or -EINVAL (@path or @ret_chip NULL), -ENOENT (no such file),
 * -EACCES (no permission), -ENOTTY (@path is not a GPIO character device),
 * -ENOMEM, or another errno from open(2).
 */
PBUS_API int pbus_gpio_chip_open(const char *path, struct pbus_gpio_chip **ret_chip);

/**
 * pbus_gpio_chip_open_by_name() - open "/dev/<name>", e.g. name "gpiochip2".
 *
 * Return: as pbus_gpio_chip_open(); -EINVAL also if @name contains '/'.
 */
PBUS_API int pbus_gpio_chip_open_by_name(const char *name, struct pbus_gpio_chip **ret_chip);

/**
 * pbus_gpio_chip_open_by_label() - open the first chip (lowest number) whose
 * driver label equals @label, e.g. "gpio-sim.0-node0" or "pinctrl-bcm2711".
 *
 * Return: as pbus_gpio_chip_open(); -ENOENT if no readable chip has that
 * label.
 */
PBUS_API int pbus_gpio_chip_open_by_label(const char *label, struct pbus_gpio_chip **ret_chip);

/**
 * pbus_gpio_chip_open_lookup() - open a chip named any way a user may type
 * it: a path ("/dev/gpiochip0"), a name ("gpiochip0"), a number ("0") or a
 * label.  Meant for command lines and configuration files.
 *
 * Return: as pbus_gpio_chip_open_by_label().
 */
PBUS_API int pbus_gpio_chip_open_lookup(const char *chip, struct pbus_gpio_chip **ret_chip);

/** pbus_gpio_chip_close() - close a chip; NULL is ignored.  Requests made from it stay valid. */
PBUS_API void pbus_gpio_chip_close(struct pbus_gpio_chip *chip);

/**
 * pbus_gpio_chip_get_fd() - the chip's descriptor, to poll for line-info
 * events (POLLIN) in the caller's own loop.  Owned by the chip.
 * Return: the descriptor, or -EINVAL if @chip is NULL.
 */
PBUS_API int pbus_gpio_chip_get_fd(const struct pbus_gpio_chip *chip);

/** pbus_gpio_chip_get_path() - the path the chip was opened with; valid until close. NULL if @chip is NULL. */
PBUS_API const char *pbus_gpio_chip_get_path(const struct pbus_gpio_chip *chip);

/**
 * pbus_gpio_chip_get_info() - name, label and number of lines of the chip.
 * Return: 0, -EINVAL (NULL argument), -ENODEV (the chip was removed), or
 * another errno from GPIO_GET_CHIPINFO_IOCTL.
 */
PBUS_API int pbus_gpio_chip_get_info(struct pbus_gpio_chip *chip, struct pbus_gpio_chip_info *ret_info);

/**
 * pbus_gpio_chip_get_line_info() - the current state of line @offset.
 * Return: 0, -EINVAL (NULL argument or @offset beyond the chip's lines),
 * -ENODEV (the chip was removed), or another errno from
 * GPIO_V2_GET_LINEINFO_IOCTL.
 */
PBUS_API int pbus_gpio_chip_get_line_info(struct pbus_gpio_chip *chip, unsigned int offset,
					  struct pbus_gpio_line_info *ret_info);

/**
 * pbus_gpio_chip_find_line() - the offset of the line called @name on this
 * chip (the first one if the name is not unique).
 * Return: 0, -EINVAL (NULL argument or empty name), -ENOENT (no such line),
 * -ENODEV (the chip was removed).
 */
PBUS_API int pbus_gpio_chip_find_line(struct pbus_gpio_chip *chip, const char *name,
				      unsigned int *ret_offset);

/**
 * pbus_gpio_find_line() - look a line up by name across all chips of the
 * system (in chip-number order) and open the chip that has it.
 * @name: the line name, e.g. "LED0".
 * @ret_chip: the open chip holding the line (the caller closes it); may be
 *            NULL if only the existence is wanted.
 * @ret_offset: the line's offset on that chip; may be NULL.
 *
 * Return: 0, -EINVAL (@name NULL or empty), -ENOENT (no chip has such a
 * line), -ENOMEM.  Chips that cannot be opened (e.g. -EACCES) are skipped.
 */
PBUS_API int pbus_gpio_find_line(const char *name, struct pbus_gpio_chip **ret_chip,
				 unsigned int *ret_offset);

/**
 * pbus_gpio_chip_watch_line_info() - start reporting changes of line
 * @offset's configuration (requested, released, reconfigured) as events on
 * the chip's descriptor, and return its current state.
 * Return: 0, -EINVAL (NULL argument, bad @offset), -EBUSY (already watched
 * through this chip), -ENODEV (the chip was removed).
 */
PBUS_API int pbus_gpio_chip_watch_line_info(struct pbus_gpio_chip *chip, unsigned int offset,
					    struct pbus_gpio_line_info *ret_info);

/**
 * pbus_gpio_chip_unwatch_line_info() - stop reporting changes of @offset.
 * Return: 0, -EINVAL (NULL chip, bad @offset), -EBUSY (the line is not
 * watched through this chip; the kernel's answer), -ENODEV.
 */
PBUS_API int pbus_gpio_chip_unwatch_line_info(struct pbus_gpio_chip *chip, unsigned int offset);

/**
 * pbus_gpio_chip_wait_info_event() - wait up to @timeout_ms (-1: forever)
 * for a line-info event.
 * Return: 1 if an event is ready, 0 on timeout, -EINVAL, or an errno from
 * poll(2) (-EINTR if interrupted by a signal).
 */
PBUS_API int pbus_gpio_chip_wait_info_event(struct pbus_gpio_chip *chip, int timeout_ms);

/**
 * pbus_gpio_chip_read_info_event() - read one line-info event; blocks until
 * one arrives.
 * Return: 0, -EINVAL, -EINTR, -ENODEV (chip removed), -EIO (short read).
 */
PBUS_API int pbus_gpio_chip_read_info_event(struct pbus_gpio_chip *chip,
					    struct pbus_gpio_info_event *ret_event);

/* ---- requests --------------------------------------------------------- */

/**
 * pbus_gpio_request_lines() - request lines of @chip with one
 * GPIO_V2_GET_LINE_IOCTL.
 * @chip: an open chip.
 * @config: options for the whole request; NULL for the defaults.
 * @offsets: @num_lines distinct line offsets; their order defines the
 *           request's indexes.
 * @settings: @num_lines settings, settings[i] for offsets[i].
 * @num_lines: 1..PBUS_GPIO_REQUEST_LINES_MAX.
 * @ret_request: the request; release it with pbus_gpio_request_release().
 *
 * The per-line settings are encoded into the kernel's line config: the most
 * common flag set becomes the default, each other distinct flag set, each
 * distinct non-zero debounce period and the output values become one
 * attribute whose mask selects request indexes.  The kernel holds at most 10
 * attributes; settings needing more are refused with -E2BIG (use fewer
 * distinct combinations, or several requests).
 *
 * Return: 0, or
 *  -EINVAL  NULL argument, @num_lines out of range, duplicate or
 *           out-of-range offset, contradictory settings (see
 *           struct pbus_gpio_line_settings), or refused by the kernel;
 *  -E2BIG   more distinct settings than the kernel's 10 attributes hold;
 *  -EBUSY   a line is already requested (by this or another process, or
 *           the kernel);
 *  -EOPNOTSUPP  a setting the chip or kernel cannot do: e.g. the HTE event
 *           clock on a kernel without CONFIG_HTE, a bias the chip cannot
 *           set, or debounce on a chip without it;
 *  -ENODEV  the chip was removed;  -ENOMEM.
 */
PBUS_API int pbus_gpio_request_lines(struct pbus_gpio_chip *chip,
				     const struct pbus_gpio_request_config *config,
				     const unsigned int *offsets,
				     const struct pbus_gpio_line_settings *settings, size_t num_lines,
				     struct pbus_gpio_request **ret_request);

/** pbus_gpio_request_release() - release the lines and free the request; NULL is ignored. */
PBUS_API void pbus_gpio_request_release(struct pbus_gpio_request *request);

/**
 * pbus_gpio_request_get_fd() - the request's descriptor, owned by the
 * request: POLLIN means edge events are ready for
 * pbus_gpio_request_read_events().  The caller may switch O_NONBLOCK on it.
 * Return: the descriptor, or -EINVAL if @request is NULL.
 */
PBUS_API int pbus_gpio_request_get_fd(const struct pbus_gpio_request *request);

/** pbus_gpio_request_get_num_lines() - number of lines; 0 if @request is NULL. */
PBUS_API size_t pbus_gpio_request_get_num_lines(const struct pbus_gpio_request *request);

/**
 * pbus_gpio_request_get_offset() - the chip offset of request index @index.
 * Return: the offset, or -EINVAL (NULL request, @index out of range).
 */
PBUS_API int pbus_gpio_request_get_offset(const struct pbus_gpio_request *request, size_t index);

/**
 * pbus_gpio_request_get_index() - the request index of chip offset @offset,
 * to build value masks.
 * Return: the index, -EINVAL (NULL request) or -ENOENT (not in the request).
 */
PBUS_API int pbus_gpio_request_get_index(const struct pbus_gpio_request *request, unsigned int offset);

/**
 * pbus_gpio_request_get_values() - read the logical values of the lines
 * selected by @mask (bit i = request index i) in one ioctl.
 * @ret_bits: bit i holds line i's value; bits outside @mask are 0.
 *
 * Hot path: no allocation, one GPIO_V2_LINE_GET_VALUES_IOCTL.
 * Return: 0, -EINVAL (NULL argument, @mask empty or naming lines the request
 * lacks), -ENODEV (the chip was removed), or another errno of the ioctl.
 */
PBUS_API int pbus_gpio_request_get_values(struct pbus_gpio_request *request, uint64_t mask,
					  uint64_t *ret_bits);

/**
 * pbus_gpio_request_set_values() - drive the output lines selected by @mask
 * to the logical values in @bits (bit i = request index i), all in one ioctl.
 *
 * Hot path: no allocation, one GPIO_V2_LINE_SET_VALUES_IOCTL.
 * Return: 0, -EINVAL (NULL request, @mask empty or naming lines the request
 * lacks), -EPERM (a selected line is not an output; the kernel's answer),
 * -ENODEV (the chip was removed), or another errno of the ioctl.
 */
PBUS_API int pbus_gpio_request_set_values(struct pbus_gpio_request *request, uint64_t mask,
					  uint64_t bits);

/**
 * pbus_gpio_request_get_value() - the logical value of the line at chip
 * offset @offset.
 * Return: 0 or 1, -ENOENT (@offset not in the request), or as
 * pbus_gpio_request_get_values().
 */
PBUS_API int pbus_gpio_request_get_value(struct pbus_gpio_request *request, unsigned int offset);

/**
 * pbus_gpio_request_set_value() - drive the line at chip offset @offset to
 * logical @value (0 or non-zero).
 * Return: 0, -ENOENT (@offset not in the request), or as
 * pbus_gpio_request_set_values().
 */
PBUS_API int pbus_gpio_request_set_value(struct pbus_gpio_request *request, unsigned int offset,
					 int value);

/**
 * pbus_gpio_request_get_values_by_offset() - read @num lines named by chip
 * offset in one ioctl; values[i] receives 0 or 1 for offsets[i].
 * Return: 0, -ENOENT (an offset not in the request), or as
 * pbus_gpio_request_get_values(); @values is untouched on failure.
 */
PBUS_API int pbus_gpio_request_get_values_by_offset(struct pbus_gpio_request *request,
						    const unsigned int *offsets, size_t num,
						    int *values);

/**
 * pbus_gpio_request_set_values_by_offset() - drive @num lines named by chip
 * offset in one ioctl: offsets[i] to values[i] (0 or non-zero).
 * Return: 0, -ENOENT (an offset not in the request), or as
 * pbus_gpio_request_set_values().
 */
PBUS_API int pbus_gpio_request_set_values_by_offset(struct pbus_gpio_request *request,
						    const unsigned int *offsets, size_t num,
						    const int *values);

/**
 * pbus_gpio_request_reconfigure() - change the settings of all lines of a
 * live request with one GPIO_V2_LINE_SET_CONFIG_IOCTL, without releasing
 * them.  Lines switched to output start at their output_value.
 * @settings: exactly pbus_gpio_request_get_num_lines() settings, by index.
 *
 * Return: 0, -EINVAL (NULL argument, @num_lines differs from the request's,
 * contradictory settings), -E2BIG, -EOPNOTSUPP, -ENODEV as for
 * pbus_gpio_request_lines().
 */
PBUS_API int pbus_gpio_request_reconfigure(struct pbus_gpio_request *request,
					   const struct pbus_gpio_line_settings *settings,
					   size_t num_lines);

/**
 * pbus_gpio_request_wait_events() - wait up to @timeout_ms (-1: forever)
 * for edge events.
 * Return: 1 if events are ready, 0 on timeout, -EINVAL, -EINTR, or another
 * errno from poll(2).
 */
PBUS_API int pbus_gpio_request_wait_events(struct pbus_gpio_request *request, int timeout_ms);

/**
 * pbus_gpio_request_read_events() - read up to @max_events edge events with
 * one read(2), straight into @events (no copy, no allocation).
 *
 * Blocks until at least one event is queued unless the descriptor is
 * non-blocking.  Events of all lines of the request arrive in the order the
 * kernel saw them; a gap in seqno means the kernel's buffer overflowed.
 *
 * Return: the number of events read (>= 1), or -EINVAL (NULL argument,
 * @max_events 0), -EAGAIN (non-blocking and nothing queued), -EINTR,
 * -ENODEV (the chip was removed), -EIO (the kernel returned a partial
 * event).
 */
PBUS_API int pbus_gpio_request_read_events(struct pbus_gpio_request *request,
					   struct pbus_gpio_edge_event *events, size_t max_events);

#ifdef __cplusplus
}
#endif

#endif /* PARAMBUS_HW_GPIO_H */
