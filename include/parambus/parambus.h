/* SPDX-License-Identifier: MIT */
/*
 * parambus/parambus.h: the umbrella header of libparambus.
 * See docs/api-guide.md for a tour.
 */
#ifndef PARAMBUS_PARAMBUS_H
#define PARAMBUS_PARAMBUS_H

#include <parambus/common.h>
#include <parambus/instance.h>
#include <parambus/schema.h>
#include <parambus/table.h>
#include <parambus/view.h>

#endif
