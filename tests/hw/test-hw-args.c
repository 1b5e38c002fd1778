/* SPDX-License-Identifier: MIT */
/*
 * test-hw-args.c - argument checking of every public entry point, with no
 * device: NULL objects and outputs give -EINVAL (never a crash), destructors
 * accept NULL, missing devices give -ENOENT, ret_* stays untouched on
 * failure, and pbus_hw_strerror() names every code.
 */
#include <errno.h>
#include <stdint.h>

#include "pbus-check.h"
#include "parambus/hw/hw.h"

static char sentinel_storage;
#define SENTINEL ((void *)&sentinel_storage)

static void destructors_accept_null(void)
{
	pbus_gpio_chip_close(NULL);
	pbus_gpio_request_release(NULL);
	pbus_i2c_close(NULL);
	pbus_spi_close(NULL);
	pbus_spi_message_free(NULL);
	pbus_pwm_close(NULL);
	pbus_uart_close(NULL);
}

static void gpio_null_arguments(void)
{
	struct pbus_gpio_chip *chip = SENTINEL;
	uint64_t bits = 0;
	unsigned int off = 0;
	struct pbus_gpio_line_info li;
	struct pbus_gpio_chip_info ci;
	struct pbus_gpio_info_event ie;
	struct pbus_gpio_edge_event ev;
	REQUIRE_EQ(pbus_gpio_chip_open(NULL, &chip), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_open("", &chip), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_open("/dev/null", NULL), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_open_by_name(NULL, &chip), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_open_by_label(NULL, &chip), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_open_lookup(NULL, &chip), -EINVAL);
	REQUIRE(chip == SENTINEL);
	REQUIRE_EQ(pbus_gpio_chip_get_fd(NULL), -EINVAL);
	REQUIRE(pbus_gpio_chip_get_path(NULL) == NULL);
	REQUIRE_EQ(pbus_gpio_chip_get_info(NULL, &ci), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_get_line_info(NULL, 0, &li), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_find_line(NULL, "x", &off), -EINVAL);
	REQUIRE_EQ(pbus_gpio_find_line(NULL, NULL, NULL), -EINVAL);
	REQUIRE_EQ(pbus_gpio_find_line("", NULL, NULL), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_watch_line_info(NULL, 0, &li), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_unwatch_line_info(NULL, 0), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_wait_info_event(NULL, 0), -EINVAL);
	REQUIRE_EQ(pbus_gpio_chip_read_info_event(NULL, &ie), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_get_fd(NULL), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_get_num_lines(NULL), 0);
	REQUIRE_EQ(pbus_gpio_request_get_offset(NULL, 0), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_get_index(NULL, 0), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_get_values(NULL, 1, &bits), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_set_values(NULL, 1, 1), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_get_value(NULL, 0), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_set_value(NULL, 0, 1), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_get_values_by_offset(NULL, &off, 1, (int[1]){ 0 }), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_set_values_by_offset(NULL, &off, 1, (int[1]){ 0 }), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_reconfigure(NULL, NULL, 1), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_wait_events(NULL, 0), -EINVAL);
	REQUIRE_EQ(pbus_gpio_request_read_events(NULL, &ev, 1), -EINVAL);
	REQUIRE_EQ(sizeof(struct pbus_gpio_edge_event), 48);
}

static void i2c_null_arguments(void)
{
	struct pbus_i2c *i2c = SENTINEL;
	unsigned long f;
	uint8_t b[32];
	REQUIRE_EQ(pbus_i2c_open(NULL, &i2c), -EINVAL);
	REQUIRE_EQ(pbus_i2c_open("/dev/i2c-0", NULL), -EINVAL);
	REQUIRE(i2c == SENTINEL);
	REQUIRE_EQ(pbus_i2c_get_fd(NULL), -EINVAL);
	REQUIRE_EQ(pbus_i2c_get_functionality(NULL, &f), -EINVAL);
	REQUIRE_EQ(pbus_i2c_set_address(NULL, 0x10, 0), -EINVAL);
	REQUIRE_EQ(pbus_i2c_get_address(NULL), -EINVAL);
	REQUIRE_EQ(pbus_i2c_set_pec(NULL, true), -EINVAL);
	REQUIRE_EQ(pbus_i2c_set_timeout(NULL, 10), -EINVAL);
	REQUIRE_EQ(pbus_i2c_set_retries(NULL, 1), -EINVAL);
	REQUIRE_EQ(pbus_i2c_transfer(NULL, NULL, 1), -EINVAL);
	REQUIRE_EQ(pbus_i2c_write_register(NULL, 0, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_i2c_read_register(NULL, 0, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_i2c_write_read(NULL, b, 1, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_i2c_read(NULL, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_i2c_write(NULL, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_quick(NULL, 0), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_read_byte(NULL), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_write_byte(NULL, 0), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_read_byte_data(NULL, 0), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_write_byte_data(NULL, 0, 0), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_read_word_data(NULL, 0), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_write_word_data(NULL, 0, 0), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_process_call(NULL, 0, 0), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_read_block_data(NULL, 0, b), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_write_block_data(NULL, 0, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_block_process_call(NULL, 0, b, 1, b), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_read_i2c_block_data(NULL, 0, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_i2c_smbus_write_i2c_block_data(NULL, 0, b, 1), -EINVAL);
}

static void spi_null_arguments(void)
{
	struct pbus_spi *spi = SENTINEL;
	uint32_t v32;
	uint8_t v8, b[4];
	REQUIRE_EQ(pbus_spi_open(NULL, &spi), -EINVAL);
	REQUIRE_EQ(pbus_spi_open("/dev/spidev0.0", NULL), -EINVAL);
	REQUIRE(spi == SENTINEL);
	REQUIRE_EQ(pbus_spi_get_fd(NULL), -EINVAL);
	REQUIRE_EQ(pbus_spi_get_bufsiz(NULL), -EINVAL);
	REQUIRE_EQ(pbus_spi_set_mode(NULL, 0), -EINVAL);
	REQUIRE_EQ(pbus_spi_get_mode(NULL, &v32), -EINVAL);
	REQUIRE_EQ(pbus_spi_set_bits_per_word(NULL, 8), -EINVAL);
	REQUIRE_EQ(pbus_spi_get_bits_per_word(NULL, &v8), -EINVAL);
	REQUIRE_EQ(pbus_spi_set_max_speed(NULL, 1), -EINVAL);
	REQUIRE_EQ(pbus_spi_get_max_speed(NULL, &v32), -EINVAL);
	REQUIRE_EQ(pbus_spi_transfer_message(NULL, NULL, 1), -EINVAL);
	REQUIRE_EQ(pbus_spi_exchange(NULL, b, b, 4), -EINVAL);
	REQUIRE_EQ(pbus_spi_write_read(NULL, b, 1, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_spi_write(NULL, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_spi_read(NULL, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_spi_message_new(NULL, NULL, 1, NULL), -EINVAL);
	REQUIRE_EQ(pbus_spi_message_run(NULL), -EINVAL);
	REQUIRE(pbus_spi_message_rx(NULL, 0) == NULL);
	REQUIRE_EQ(pbus_spi_message_get_length(NULL, 0), -EINVAL);
}

static void pwm_open_errors(void)
{
	struct pbus_pwm *pwm = SENTINEL;
	struct pbus_pwm_state st;
	REQUIRE_EQ(pbus_pwm_open(0, 0, 0, 0, NULL), -EINVAL);
	REQUIRE_EQ(pbus_pwm_open(0, 0, PBUS_PWM_OPEN_SYSFS_ONLY | PBUS_PWM_OPEN_CHARDEV_ONLY, 0, &pwm), -EINVAL);
	REQUIRE_EQ(pbus_pwm_open(0, 0, 0x100, 0, &pwm), -EINVAL);
	REQUIRE_EQ(pbus_pwm_open(0, 0, 0, -1, &pwm), -EINVAL);
	REQUIRE_EQ(pbus_pwm_open(4711, 0, 0, 0, &pwm), -ENOENT);
	REQUIRE_EQ(pbus_pwm_open(4711, 0, PBUS_PWM_OPEN_SYSFS_ONLY, 0, &pwm), -ENOENT);
	/* no /dev/pwmchip4711: the chardev-only request is refused cleanly */
	REQUIRE_EQ(pbus_pwm_open(4711, 0, PBUS_PWM_OPEN_CHARDEV_ONLY, 0, &pwm), -EOPNOTSUPP);
	REQUIRE(pwm == SENTINEL);
	REQUIRE_EQ(pbus_pwm_get_backend(NULL), -EINVAL);
	REQUIRE_EQ(pbus_pwm_get_state(NULL, &st), -EINVAL);
	REQUIRE_EQ(pbus_pwm_configure(NULL, &st), -EINVAL);
	REQUIRE_EQ(pbus_pwm_set_period(NULL, 1), -EINVAL);
	REQUIRE_EQ(pbus_pwm_set_duty_cycle(NULL, 1), -EINVAL);
	REQUIRE_EQ(pbus_pwm_set_polarity(NULL, PBUS_PWM_POLARITY_NORMAL), -EINVAL);
	REQUIRE_EQ(pbus_pwm_enable(NULL, true), -EINVAL);
}

static void uart_null_arguments(void)
{
	struct pbus_uart *u = SENTINEL;
	struct pbus_uart_config c;
	uint8_t b[4];
	pbus_uart_config_init(NULL);
	REQUIRE_EQ(pbus_uart_open(NULL, NULL, 0, &u), -EINVAL);
	REQUIRE_EQ(pbus_uart_open("/dev/null", NULL, 0, NULL), -EINVAL);
	REQUIRE(u == SENTINEL);
	REQUIRE_EQ(pbus_uart_get_fd(NULL), -EINVAL);
	REQUIRE_EQ(pbus_uart_configure(NULL, &c), -EINVAL);
	REQUIRE_EQ(pbus_uart_get_config(NULL, &c), -EINVAL);
	REQUIRE_EQ(pbus_uart_set_read_mode(NULL, 1, 0), -EINVAL);
	REQUIRE_EQ(pbus_uart_set_nonblocking(NULL, true), -EINVAL);
	REQUIRE_EQ(pbus_uart_read(NULL, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_uart_read_timeout(NULL, b, 1, 0), -EINVAL);
	REQUIRE_EQ(pbus_uart_write(NULL, b, 1), -EINVAL);
	REQUIRE_EQ(pbus_uart_drain(NULL), -EINVAL);
	REQUIRE_EQ(pbus_uart_flush(NULL, PBUS_UART_QUEUE_BOTH), -EINVAL);
	REQUIRE_EQ(pbus_uart_get_input_pending(NULL), -EINVAL);
	REQUIRE_EQ(pbus_uart_get_output_pending(NULL), -EINVAL);
}

static void strerror_names_codes(void)
{
	REQUIRE(strcmp(pbus_hw_strerror(-ENXIO), "no device answered at this address") == 0);
	REQUIRE(strcmp(pbus_hw_strerror(ENXIO), pbus_hw_strerror(-ENXIO)) == 0);
	REQUIRE(strstr(pbus_hw_strerror(-EBUSY), "busy") != NULL);
	REQUIRE(strstr(pbus_hw_strerror(-EMSGSIZE), "too long") != NULL);
	REQUIRE(strstr(pbus_hw_strerror(-ENODEV), "removed") != NULL);
	REQUIRE(pbus_hw_strerror(-ELOOP) != NULL && *pbus_hw_strerror(-ELOOP));
	REQUIRE(strcmp(pbus_hw_strerror(-99999), "unknown error") == 0);
	REQUIRE(strcmp(pbus_hw_strerror(0), "success") == 0);
}

int main(void)
{
	pbus_check_suite("hw/args");
	RUN_CASE(destructors_accept_null);
	RUN_CASE(gpio_null_arguments);
	RUN_CASE(i2c_null_arguments);
	RUN_CASE(spi_null_arguments);
	RUN_CASE(pwm_open_errors);
	RUN_CASE(uart_null_arguments);
	RUN_CASE(strerror_names_codes);
	CHECK_EXIT();
}
