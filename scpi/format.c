/* SPDX-License-Identifier: MIT */
/*
 * format.c: SCPI error texts and the IEEE 488.2 response formats (8.7):
 * NR1, NR2, NR3, booleans as 0/1, strings in double quotes with inner
 * quotes doubled, definite-length arbitrary blocks. Each writes like
 * snprintf (never beyond size, NUL-terminated when size > 0) and returns the
 * length the whole response needs. No state: any thread.
 */
#include "scpi.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct error_text {
	int code;
	const char *text;
};

/* SCPI-99 volume 2, chapter 21.8 (command errors -1xx, execution -2xx,
 * device-specific -3xx, query -4xx). */
static const struct error_text ERRORS[] = {
	{0, "No error"},
	{-100, "Command error"},
	{-101, "Invalid character"},
	{-102, "Syntax error"},
	{-103, "Invalid separator"},
	{-104, "Data type error"},
	{-105, "GET not allowed"},
	{-108, "Parameter not allowed"},
	{-109, "Missing parameter"},
	{-110, "Command header error"},
	{-111, "Header separator error"},
	{-112, "Program mnemonic too long"},
	{-113, "Undefined header"},
	{-114, "Header suffix out of range"},
	{-120, "Numeric data error"},
	{-121, "Invalid character in number"},
	{-123, "Exponent too large"},
	{-124, "Too many digits"},
	{-128, "Numeric data not allowed"},
	{-130, "Suffix error"},
	{-131, "Invalid suffix"},
	{-134, "Suffix too long"},
	{-138, "Suffix not allowed"},
	{-140, "Character data error"},
	{-141, "Invalid character data"},
	{-144, "Character data too long"},
	{-148, "Character data not allowed"},
	{-150, "String data error"},
	{-151, "Invalid string data"},
	{-158, "String data not allowed"},
	{-160, "Block data error"},
	{-161, "Invalid block data"},
	{-168, "Block data not allowed"},
	{-200, "Execution error"},
	{-203, "Command protected"},
	{-220, "Parameter error"},
	{-221, "Settings conflict"},
	{-222, "Data out of range"},
	{-223, "Too much data"},
	{-224, "Illegal parameter value"},
	{-240, "Hardware error"},
	{-241, "Hardware missing"},
	{-350, "Queue overflow"},
	{-363, "Input buffer overrun"},
	{-400, "Query error"},
	{-410, "Query INTERRUPTED"},
	{-420, "Query UNTERMINATED"},
};

const char *pbus_scpi_error_text(int code)
{
	for (size_t i = 0; i < sizeof(ERRORS) / sizeof(ERRORS[0]); i++)
		if (ERRORS[i].code == code)
			return ERRORS[i].text;
	return "Unknown error";
}

static int special(char *buf, size_t size, double value)
{
	if (isnan(value))
		return snprintf(buf, size, "9.91E+37");
	return snprintf(buf, size, value > 0 ? "9.9E+37" : "-9.9E+37");
}

int pbus_scpi_format_nr1(char *buf, size_t size, int64_t value)
{
	return snprintf(buf, size, "%" PRId64, value);
}

int pbus_scpi_format_nr2(char *buf, size_t size, double value, int decimals)
{
	if (!isfinite(value))
		return special(buf, size, value);
	if (decimals < 1)
		decimals = 1;
	if (decimals > 17)
		decimals = 17;
	return snprintf(buf, size, "%.*f", decimals, value);
}

int pbus_scpi_format_nr3(char *buf, size_t size, double value, int digits)
{
	if (!isfinite(value))
		return special(buf, size, value);
	if (digits < 1)
		digits = 1;
	if (digits > 17)
		digits = 17;
	/* d.dddE+xx: one digit before the point, digits - 1 after it. */
	return snprintf(buf, size, "%.*E", digits - 1 > 0 ? digits - 1 : 1, value);
}

int pbus_scpi_format_bool(char *buf, size_t size, bool value)
{
	return snprintf(buf, size, "%d", value ? 1 : 0);
}

static void put(char *buf, size_t size, size_t at, char c)
{
	if (at + 1 < size)
		buf[at] = c;
}

int pbus_scpi_format_string(char *buf, size_t size, const char *text, size_t length)
{
	size_t n = 0;
	put(buf, size, n++, '"');
	for (size_t i = 0; i < length; i++) {
		if (text[i] == '"')
			put(buf, size, n++, '"');
		put(buf, size, n++, text[i]);
	}
	put(buf, size, n++, '"');
	if (size)
		buf[n < size ? n : size - 1] = 0;
	return n > 0x7fffffff ? -1 : (int)n;
}

int pbus_scpi_format_block(char *buf, size_t size, const void *data, size_t length)
{
	char len[24];
	int digits = snprintf(len, sizeof(len), "%zu", length);
	char head[32];
	int h = snprintf(head, sizeof(head), "#%d%s", digits, len);
	size_t n = 0;
	for (int i = 0; i < h; i++)
		put(buf, size, n++, head[i]);
	for (size_t i = 0; i < length; i++)
		put(buf, size, n++, ((const char *)data)[i]);
	if (size)
		buf[n < size ? n : size - 1] = 0;
	return n > 0x7fffffff ? -1 : (int)n;
}
