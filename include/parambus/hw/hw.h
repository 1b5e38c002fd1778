/* SPDX-License-Identifier: MIT */
/*
 * parambus/hw/hw.h - libparambus-hw, the whole API in one include.
 *
 * Direct hardware access for embedded Linux through the kernel's own
 * userspace interfaces, with plain ioctls and no helper library:
 *
 *   gpio.h  GPIO character device, uAPI v2 (/dev/gpiochipN)
 *   i2c.h   i2c-dev with I2C_RDWR and the SMBus ioctl (/dev/i2c-N)
 *   spi.h   spidev with prepared messages (/dev/spidevB.C)
 *   pwm.h   PWM character device (Linux >= 6.13) or sysfs
 *   uart.h  ttys with termios2 (any baud rate)
 *
 * Usable on its own: link with -lparambus-hw (pkg-config parambus-hw).
 * Conventions (errors, ownership, threads) are in common.h.  A guide with an
 * example per bus is docs/hardware-guide.md.
 */
#ifndef PARAMBUS_HW_HW_H
#define PARAMBUS_HW_HW_H

#include <parambus/hw/common.h>
#include <parambus/hw/gpio.h>
#include <parambus/hw/i2c.h>
#include <parambus/hw/pwm.h>
#include <parambus/hw/spi.h>
#include <parambus/hw/uart.h>

#endif /* PARAMBUS_HW_HW_H */
