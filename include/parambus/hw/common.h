/* SPDX-License-Identifier: MIT */
/*
 * parambus/hw/common.h - what every libparambus-hw header shares.
 *
 * libparambus-hw is the hardware-access library of parambus.  It talks to
 * the kernel's own userspace interfaces (GPIO character device v2, i2c-dev,
 * spidev, PWM, tty/termios2) with plain ioctls and needs nothing else from
 * parambus: include <parambus/hw/hw.h> and link with -lparambus-hw.  Its
 * headers share <parambus/common.h> with libparambus's (the PBUS_API export
 * macro and the project's version, PBUS_VERSION_*); the library does not
 * link libparambus.
 *
 * Conventions, stated once for the whole library:
 *
 *  - Errors.  Every function that can fail returns 0 (or a non-negative
 *    result that its documentation names) on success and a negative errno
 *    value on failure.  The library never prints, never aborts and never
 *    swallows an error: whatever the kernel answered is what the caller gets.
 *    pbus_hw_strerror() turns such a value into a short description.
 *  - Output parameters are called ret_* and come last.  They are written
 *    only on success; on failure they are left untouched.
 *  - Objects are opaque.  Whoever opens closes: every pbus_*_open() /
 *    pbus_*_new() has a pbus_*_close() / pbus_*_free() that accepts NULL and
 *    cannot fail.
 *  - Threads.  Unless a function says otherwise, one object may be used by
 *    one thread at a time; distinct objects may be used from distinct threads
 *    in parallel.  The library keeps no global mutable state.
 *  - File descriptors are opened with O_CLOEXEC.
 *  - Hot paths allocate nothing: GPIO get/set, prepared SPI runs, SMBus
 *    calls, I2C register access and UART I/O only issue their system call.
 */
#ifndef PARAMBUS_HW_COMMON_H
#define PARAMBUS_HW_COMMON_H

#include <parambus/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * pbus_hw_strerror() - describe an error code returned by libparambus-hw.
 * @err: a value returned by any pbus_* hardware function; both -EFOO and
 *       EFOO are accepted.
 *
 * Returns a static, NUL-terminated English string, never NULL (unknown
 * codes give "unknown error").  The text is phrased for hardware access
 * (e.g. -ENXIO reads "no device answered at this address"); callers that
 * print it should add the operation and the device themselves.
 *
 * Thread-safe; the returned string is valid for the life of the process.
 */
PBUS_API const char *pbus_hw_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* PARAMBUS_HW_COMMON_H */
