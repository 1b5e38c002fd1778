// SPDX-License-Identifier: GPL-2.0
/*
 * pbus-mock-pwm: a four-channel PWM chip that records the state it is
 * given, for the parambus kernel test VM.
 *
 * No PWM driver binds in the VM; this one accepts every state the PWM core
 * lets through and shows, per channel, the last applied state and how many
 * times apply was called, so that tests can check what libparambus-hw asked
 * for (and in which order: the core rejects duty > period). A fault knob
 * makes apply fail. Specified in tests/kernel/ENVIRONMENT.md, section 6.
 */

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/pwm.h>
#include <linux/seq_file.h>

#define DRV_NAME "pbus-mock-pwm"
#define NPWM 4

struct mock_chan {
	bool requested;
	struct pwm_state state;
	unsigned int applies;
};

struct mock_pwm {
	struct pwm_chip chip;
	struct mutex lock;	/* chan[], fault */
	struct mock_chan chan[NPWM];
	int fault;
	struct dentry *dir;
};

static struct mock_pwm *to_mock(struct pwm_chip *chip)
{
	return container_of(chip, struct mock_pwm, chip);
}

static int mock_request(struct pwm_chip *chip, struct pwm_device *pwm)
{
	struct mock_pwm *mp = to_mock(chip);

	mutex_lock(&mp->lock);
	mp->chan[pwm->hwpwm].requested = true;
	mutex_unlock(&mp->lock);
	return 0;
}

static void mock_free(struct pwm_chip *chip, struct pwm_device *pwm)
{
	struct mock_pwm *mp = to_mock(chip);

	mutex_lock(&mp->lock);
	mp->chan[pwm->hwpwm].requested = false;
	mutex_unlock(&mp->lock);
}

static int mock_apply(struct pwm_chip *chip, struct pwm_device *pwm,
		      const struct pwm_state *state)
{
	struct mock_pwm *mp = to_mock(chip);
	struct mock_chan *c = &mp->chan[pwm->hwpwm];
	int ret = 0;

	mutex_lock(&mp->lock);
	c->applies++;
	if (mp->fault)
		ret = -mp->fault;
	else
		c->state = *state;
	mutex_unlock(&mp->lock);
	return ret;
}

static int mock_get_state(struct pwm_chip *chip, struct pwm_device *pwm,
			  struct pwm_state *state)
{
	struct mock_pwm *mp = to_mock(chip);

	mutex_lock(&mp->lock);
	*state = mp->chan[pwm->hwpwm].state;
	mutex_unlock(&mp->lock);
	return 0;
}

static const struct pwm_ops mock_ops = {
	.request = mock_request,
	.free = mock_free,
	.apply = mock_apply,
	.get_state = mock_get_state,
	.owner = THIS_MODULE,
};

static int state_show(struct seq_file *s, void *unused)
{
	struct mock_pwm *mp = s->private;
	unsigned int i;

	mutex_lock(&mp->lock);
	for (i = 0; i < NPWM; i++) {
		const struct mock_chan *c = &mp->chan[i];

		seq_printf(s, "pwm=%u requested=%d enabled=%d period=%llu duty=%llu "
			   "polarity=%s applies=%u\n", i, c->requested, c->state.enabled,
			   c->state.period, c->state.duty_cycle,
			   c->state.polarity == PWM_POLARITY_INVERSED ? "inversed" : "normal",
			   c->applies);
	}
	mutex_unlock(&mp->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(state);

static int fault_get(void *data, u64 *val)
{
	struct mock_pwm *mp = data;

	mutex_lock(&mp->lock);
	*val = (u64)mp->fault;
	mutex_unlock(&mp->lock);
	return 0;
}

static int fault_set(void *data, u64 val)
{
	struct mock_pwm *mp = data;

	if (val > 4095)
		return -EINVAL;
	mutex_lock(&mp->lock);
	mp->fault = (int)val;
	mutex_unlock(&mp->lock);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(fault_fops, fault_get, fault_set, "%llu\n");

static int mock_probe(struct platform_device *pdev)
{
	struct mock_pwm *mp;
	int ret;

	mp = devm_kzalloc(&pdev->dev, sizeof(*mp), GFP_KERNEL);
	if (!mp)
		return -ENOMEM;
	mutex_init(&mp->lock);
	mp->chip.dev = &pdev->dev;
	mp->chip.ops = &mock_ops;
	mp->chip.npwm = NPWM;
	mp->chip.base = -1;

	ret = devm_pwmchip_add(&pdev->dev, &mp->chip);
	if (ret)
		return ret;
	mp->dir = debugfs_create_dir(DRV_NAME, NULL);
	debugfs_create_file("state", 0444, mp->dir, mp, &state_fops);
	debugfs_create_file_unsafe("fault", 0644, mp->dir, mp, &fault_fops);
	platform_set_drvdata(pdev, mp);
	return 0;
}

static int mock_remove(struct platform_device *pdev)
{
	struct mock_pwm *mp = platform_get_drvdata(pdev);

	debugfs_remove_recursive(mp->dir);
	return 0;	/* devres removes the chip */
}

static struct platform_driver mock_driver = {
	.driver = { .name = DRV_NAME },
	.probe = mock_probe,
	.remove = mock_remove,
};

static struct platform_device *mock_pdev;

static int __init mock_init(void)
{
	int ret = platform_driver_register(&mock_driver);

	if (ret)
		return ret;
	mock_pdev = platform_device_register_simple(DRV_NAME, 0, NULL, 0);
	if (IS_ERR(mock_pdev)) {
		platform_driver_unregister(&mock_driver);
		return PTR_ERR(mock_pdev);
	}
	return 0;
}

static void __exit mock_exit(void)
{
	platform_device_unregister(mock_pdev);
	platform_driver_unregister(&mock_driver);
}

module_init(mock_init);
module_exit(mock_exit);
MODULE_DESCRIPTION("parambus test VM: PWM chip that records the applied state");
MODULE_LICENSE("GPL");
