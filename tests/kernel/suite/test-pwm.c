/* SPDX-License-Identifier: MIT */
/*
 * test-pwm.c - libparambus-hw PWM against pbus-mock-pwm (four channels,
 * sysfs only: this 6.1 kernel has no /dev/pwmchipN; ENVIRONMENT.md
 * section 6).  The mock's debugfs "state" shows what the core applied.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/suite.h"
#include "parambus/hw/pwm.h"

#define DBG "/sys/kernel/debug/pbus-mock-pwm"
#define MOCK_DRV "/sys/bus/platform/drivers/pbus-mock-pwm"

static char chip_dir[128];
static unsigned int chip_num;

static bool exported(unsigned int ch)
{
	char p[160];
	struct stat st;
	snprintf(p, sizeof(p), "%s/pwm%u", chip_dir, ch);
	return stat(p, &st) == 0;
}

static bool state_has(unsigned int ch, const char *what)
{
	char line[32];
	const char *s = suite_read(DBG "/state");
	if (!s)
		return false;
	snprintf(line, sizeof(line), "pwm=%u ", ch);
	const char *l = strstr(s, line);
	if (!l)
		return false;
	const char *end = strchr(l, '\n');
	const char *hit = strstr(l, what);
	return hit && (!end || hit < end);
}

static const char *chardev_absent_falls_back(void)
{
	struct pbus_pwm *pwm = NULL;
	char dev[32];
	struct stat st;
	snprintf(dev, sizeof(dev), "/dev/pwmchip%u", chip_num);
	T_EXPECT(stat(dev, &st) < 0 && errno == ENOENT);
	T_EQ(pbus_pwm_open(chip_num, 0, PBUS_PWM_OPEN_CHARDEV_ONLY, 0, &pwm), -EOPNOTSUPP);
	T_EXPECT(pwm == NULL);
	T_EXPECT(!exported(0)); /* the refused open changed nothing */
	T_EQ(pbus_pwm_open(chip_num, 0, 0, 0, &pwm), 0);
	T_EQ(pbus_pwm_get_backend(pwm), PBUS_PWM_BACKEND_SYSFS);
	pbus_pwm_close(pwm);
	return NULL;
}

static const char *every_channel_exports(void)
{
	/* Pi4J: "PWM channels other than 0 failing to export". */
	struct pbus_pwm *pwm[4] = { NULL };
	for (unsigned int ch = 0; ch < 4; ch++) {
		T_EQ(pbus_pwm_open(chip_num, ch, 0, 0, &pwm[ch]), 0);
		T_EXPECT(exported(ch));
		T_EXPECT(state_has(ch, "requested=1"));
		struct pbus_pwm_state st = { .period_ns = 1000000 + ch, .duty_cycle_ns = 1000 * ch,
					     .enabled = true };
		T_EQ(pbus_pwm_configure(pwm[ch], &st), 0);
	}
	for (unsigned int ch = 0; ch < 4; ch++) {
		char want[64];
		snprintf(want, sizeof(want), "enabled=1 period=%u duty=%u", 1000000 + ch, 1000 * ch);
		T_EXPECT(state_has(ch, want));
		pbus_pwm_enable(pwm[ch], false);
		pbus_pwm_close(pwm[ch]);
		T_EXPECT(!exported(ch)); /* we exported it, we unexport it */
	}
	struct pbus_pwm *bad = NULL;
	T_EQ(pbus_pwm_open(chip_num, 4, 0, 0, &bad), -EINVAL);
	T_EQ(pbus_pwm_open(chip_num + 7, 0, 0, 0, &bad), -ENOENT);
	return NULL;
}

static const char *duty_never_exceeds_period(void)
{
	struct pbus_pwm *pwm = NULL;
	struct pbus_pwm_state st;
	T_EQ(pbus_pwm_open(chip_num, 1, 0, 0, &pwm), 0);
	struct pbus_pwm_state a = { .period_ns = 1000000, .duty_cycle_ns = 500000, .enabled = true };
	T_EQ(pbus_pwm_configure(pwm, &a), 0);
	/* shorter period AND duty: duty must be written first */
	struct pbus_pwm_state b = { .period_ns = 200000, .duty_cycle_ns = 100000, .enabled = true };
	T_EQ(pbus_pwm_configure(pwm, &b), 0);
	T_EXPECT(state_has(1, "period=200000 duty=100000"));
	/* longer: period first */
	struct pbus_pwm_state c = { .period_ns = 5000000, .duty_cycle_ns = 4000000, .enabled = true };
	T_EQ(pbus_pwm_configure(pwm, &c), 0);
	T_EXPECT(state_has(1, "period=5000000 duty=4000000"));
	T_EQ(pbus_pwm_get_state(pwm, &st), 0);
	T_EXPECT(st.period_ns == 5000000 && st.duty_cycle_ns == 4000000 && st.enabled &&
		 st.polarity == PBUS_PWM_POLARITY_NORMAL);
	/* single setters: refused, and nothing changes */
	T_EQ(pbus_pwm_set_period(pwm, 3000000), -EINVAL);
	T_EQ(pbus_pwm_set_duty_cycle(pwm, 6000000), -EINVAL);
	T_EQ(pbus_pwm_get_state(pwm, &st), 0);
	T_EXPECT(st.period_ns == 5000000 && st.duty_cycle_ns == 4000000);
	struct pbus_pwm_state bad = { .period_ns = 10, .duty_cycle_ns = 20 };
	T_EQ(pbus_pwm_configure(pwm, &bad), -EINVAL);
	/* the setters themselves */
	T_EQ(pbus_pwm_set_period(pwm, 8000000), 0);
	T_EQ(pbus_pwm_set_duty_cycle(pwm, 7000000), 0);
	T_EXPECT(state_has(1, "period=8000000 duty=7000000"));
	T_EQ(pbus_pwm_enable(pwm, false), 0);
	T_EXPECT(state_has(1, "enabled=0"));
	pbus_pwm_close(pwm);
	return NULL;
}

static const char *polarity(void)
{
	struct pbus_pwm *pwm = NULL;
	struct pbus_pwm_state st;
	T_EQ(pbus_pwm_open(chip_num, 2, 0, 0, &pwm), 0);
	struct pbus_pwm_state a = { .period_ns = 100000, .duty_cycle_ns = 25000, .enabled = true };
	T_EQ(pbus_pwm_configure(pwm, &a), 0);
	/* a polarity change while enabled: configure disables around it */
	a.polarity = PBUS_PWM_POLARITY_INVERSED;
	T_EQ(pbus_pwm_configure(pwm, &a), 0);
	T_EXPECT(state_has(2, "enabled=1 period=100000 duty=25000 polarity=inversed"));
	T_EQ(pbus_pwm_get_state(pwm, &st), 0);
	T_EQ(st.polarity, PBUS_PWM_POLARITY_INVERSED);
	T_EQ(pbus_pwm_enable(pwm, false), 0);
	T_EQ(pbus_pwm_set_polarity(pwm, PBUS_PWM_POLARITY_NORMAL), 0);
	T_EXPECT(state_has(2, "polarity=normal"));
	T_EQ(pbus_pwm_set_polarity(pwm, (enum pbus_pwm_polarity)5), -EINVAL);
	pbus_pwm_close(pwm);
	return NULL;
}

static const char *already_exported_stays_exported(void)
{
	char p[160], num[8];
	snprintf(p, sizeof(p), "%s/export", chip_dir);
	snprintf(num, sizeof(num), "3");
	T_EQ(kenv_write_file(p, num), 0);
	struct pbus_pwm *pwm = NULL;
	T_EQ(pbus_pwm_open(chip_num, 3, 0, 0, &pwm), 0);
	pbus_pwm_close(pwm);
	T_EXPECT(exported(3)); /* not ours to unexport */
	snprintf(p, sizeof(p), "%s/unexport", chip_dir);
	T_EQ(kenv_write_file(p, num), 0);
	return NULL;
}

/* The udev race: after export, the attribute files exist but belong to
 * root until udev hands them to the PWM group.  An unprivileged process
 * opening the channel must wait for that, not fail.  We play udev: export
 * as root, then give the files to the child's uid 150 ms later. */
static int child_open(int timeout_ms)
{
	struct pbus_pwm *pwm = NULL;
	if (setgid(65534) < 0 || setuid(65534) < 0)
		return 100;
	int r = pbus_pwm_open(chip_num, 1, PBUS_PWM_OPEN_SYSFS_ONLY, timeout_ms, &pwm);
	if (r < 0)
		return -r;
	struct pbus_pwm_state st = { .period_ns = 123456, .duty_cycle_ns = 0 };
	r = pbus_pwm_configure(pwm, &st);
	r = r < 0 ? 100 + -r : 0;
	pbus_pwm_close(pwm);
	return r;
}

static const char *udev_export_race(void)
{
	static const char *const attrs[] = { "period", "duty_cycle", "polarity", "enable" };
	char p[200];
	snprintf(p, sizeof(p), "%s/export", chip_dir);
	T_EQ(kenv_write_file(p, "1"), 0);
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/pwm1/%s", chip_dir, attrs[i]);
		T_EQ(chmod(p, 0600), 0);
	}
	/* 1: the files become usable in time */
	pid_t pid = fork();
	if (pid == 0)
		_exit(child_open(3000));
	suite_sleep_ms(150);
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/pwm1/%s", chip_dir, attrs[i]);
		T_EQ(chown(p, 65534, 65534), 0);
	}
	int status = 0;
	T_EQ(waitpid(pid, &status, 0), pid);
	T_EXPECT(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0)
		T_FAIL("child failed: %d", WEXITSTATUS(status));
	T_EXPECT(state_has(1, "period=123456"));
	/* 2: they never do: a clean -ETIMEDOUT */
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/pwm1/%s", chip_dir, attrs[i]);
		T_EQ(chown(p, 0, 0), 0);
	}
	pid = fork();
	if (pid == 0)
		_exit(child_open(200));
	T_EQ(waitpid(pid, &status, 0), pid);
	T_EXPECT(WIFEXITED(status));
	T_EQ(WEXITSTATUS(status), ETIMEDOUT);
	snprintf(p, sizeof(p), "%s/unexport", chip_dir);
	T_EQ(kenv_write_file(p, "1"), 0);
	return NULL;
}

static const char *apply_fault_reported(void)
{
	struct pbus_pwm *pwm = NULL;
	T_EQ(pbus_pwm_open(chip_num, 0, 0, 0, &pwm), 0);
	T_EQ(pbus_pwm_set_period(pwm, 1000000), 0);
	T_EQ(kenv_write_file(DBG "/fault", "5"), 0);
	int r = pbus_pwm_set_duty_cycle(pwm, 1000);
	kenv_write_file(DBG "/fault", "0");
	T_EQ(r, -EIO);
	T_EQ(pbus_pwm_set_duty_cycle(pwm, 1000), 0);
	pbus_pwm_close(pwm);
	return NULL;
}

static const char *chip_removed_while_in_use(void)
{
	struct pbus_pwm *pwm = NULL;
	struct pbus_pwm_state st;
	T_EQ(pbus_pwm_open(chip_num, 2, 0, 0, &pwm), 0);
	T_EQ(pbus_pwm_set_period(pwm, 1000000), 0);
	T_EQ(kenv_unbind(MOCK_DRV, "pbus-mock-pwm.0"), 0);
	int r1 = pbus_pwm_set_duty_cycle(pwm, 1000);
	int r2 = pbus_pwm_get_state(pwm, &st);
	pbus_pwm_close(pwm); /* the unexport fails quietly: nothing to undo */
	int rb = kenv_bind(MOCK_DRV, "pbus-mock-pwm.0");
	T_EQ(r1, -ENODEV);
	T_EQ(r2, -ENODEV);
	T_EQ(rb, 0);
	return NULL;
}

int main(void)
{
	suite_init();
	if (kenv_pwmchip_path(chip_dir, sizeof(chip_dir)) < 0 ||
	    sscanf(strrchr(chip_dir, '/'), "/pwmchip%u", &chip_num) != 1) {
		kenv_fail("pwm/find-chip", "no pbus-mock-pwm chip");
		return 1;
	}
	SUITE_RUN("pwm/chardev-absent-falls-back", chardev_absent_falls_back);
	SUITE_RUN("pwm/every-channel-exports", every_channel_exports);
	SUITE_RUN("pwm/duty-never-exceeds-period", duty_never_exceeds_period);
	SUITE_RUN("pwm/polarity", polarity);
	SUITE_RUN("pwm/already-exported-stays-exported", already_exported_stays_exported);
	SUITE_RUN("pwm/udev-export-race", udev_export_race);
	SUITE_RUN("pwm/apply-fault-reported", apply_fault_reported);
	SUITE_RUN("pwm/chip-removed-while-in-use", chip_removed_while_in_use);
	return suite_exit();
}
