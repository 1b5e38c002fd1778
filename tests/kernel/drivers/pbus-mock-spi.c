// SPDX-License-Identifier: GPL-2.0
/*
 * pbus-mock-spi: a loopback SPI controller with two spidev devices, for the
 * parambus kernel test VM.
 *
 * The VM has no SPI controller, and what libparambus-hw must get right is
 * what reaches the controller: the 32-bit mode, speeds, bits per word,
 * cs_change, delays, the grouping of transfers into messages and the chip
 * select toggles. So this controller copies tx to rx and records all of that
 * in a debugfs log that tests read back. Its devices are bound to the
 * kernel's own spidev through a modalias in spidev's ID table. The format of
 * the log is specified in tests/kernel/ENVIRONMENT.md, section 5.
 */

#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/spi/spi.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#define DRV_NAME "pbus-mock-spi"
#define BUS_NUM 0
#define LOG_LINES 256
#define LAST_LINES 128
#define LINE_LEN 320
#define TX_SHOWN 64

struct mock_spi {
	spinlock_t lock;	/* the logs; set_cs may be called in atomic context */
	char (*log)[LINE_LEN];
	unsigned int log_head, log_count;
	char (*last)[LINE_LEN];
	unsigned int last_count;
	u64 seq;
	unsigned int idx;	/* transfer index within the current message */
	int fault;
	struct dentry *dir;
};

static void add_line(struct mock_spi *ms, const char *fmt, ...)
{
	unsigned long flags;
	va_list ap;
	char *dst;

	spin_lock_irqsave(&ms->lock, flags);
	dst = ms->log[ms->log_head];
	va_start(ap, fmt);
	vscnprintf(dst, LINE_LEN, fmt, ap);
	va_end(ap);
	ms->log_head = (ms->log_head + 1) % LOG_LINES;
	if (ms->log_count < LOG_LINES)
		ms->log_count++;
	if (ms->last_count < LAST_LINES)
		strscpy(ms->last[ms->last_count++], dst, LINE_LEN);
	spin_unlock_irqrestore(&ms->lock, flags);
}

static const char *unit_name(u8 unit)
{
	switch (unit) {
	case SPI_DELAY_UNIT_USECS:
		return "us";
	case SPI_DELAY_UNIT_NSECS:
		return "ns";
	case SPI_DELAY_UNIT_SCK:
		return "sck";
	}
	return "?";
}

static int mock_prepare_message(struct spi_controller *ctlr, struct spi_message *msg)
{
	struct mock_spi *ms = spi_controller_get_devdata(ctlr);
	struct spi_transfer *t;
	unsigned int n = 0;
	unsigned long flags;

	list_for_each_entry(t, &msg->transfers, transfer_list)
		n++;
	spin_lock_irqsave(&ms->lock, flags);
	ms->seq++;
	ms->idx = 0;
	ms->last_count = 0;
	spin_unlock_irqrestore(&ms->lock, flags);
	add_line(ms, "msg seq=%llu cs=%u ntransfers=%u mode=0x%08x max_speed=%u",
		 ms->seq, msg->spi->chip_select, n, msg->spi->mode, msg->spi->max_speed_hz);
	return 0;
}

static void mock_set_cs(struct spi_device *spi, bool level)
{
	struct mock_spi *ms = spi_controller_get_devdata(spi->controller);

	add_line(ms, "cs cs=%u level=%d", spi->chip_select, level ? 1 : 0);
}

static int mock_transfer_one(struct spi_controller *ctlr, struct spi_device *spi,
			     struct spi_transfer *t)
{
	struct mock_spi *ms = spi_controller_get_devdata(ctlr);
	char tx[TX_SHOWN * 2 + 4];
	unsigned int i, shown = min_t(unsigned int, t->len, TX_SHOWN);
	int fault = READ_ONCE(ms->fault);

	if (t->tx_buf) {
		for (i = 0; i < shown; i++)
			snprintf(tx + 2 * i, 3, "%02x", ((const u8 *)t->tx_buf)[i]);
		tx[2 * shown] = 0;
		if (t->len > TX_SHOWN)
			strcat(tx, "...");
	} else {
		strcpy(tx, "-");
	}
	add_line(ms, "xfer seq=%llu idx=%u cs=%u mode=0x%08x max_speed=%u speed=%u bpw=%u len=%u "
		 "tx_nbits=%u rx_nbits=%u cs_change=%u delay=%u%s word_delay=%u%s "
		 "cs_change_delay=%u%s tx=%s",
		 ms->seq, ms->idx++, spi->chip_select, spi->mode, spi->max_speed_hz,
		 t->speed_hz, t->bits_per_word, t->len, t->tx_nbits, t->rx_nbits,
		 t->cs_change, t->delay.value, unit_name(t->delay.unit),
		 t->word_delay.value, unit_name(t->word_delay.unit),
		 t->cs_change_delay.value, unit_name(t->cs_change_delay.unit), tx);
	if (fault)
		return -fault;
	if (t->rx_buf) {
		if (t->tx_buf)
			memcpy(t->rx_buf, t->tx_buf, t->len);
		else
			memset(t->rx_buf, 0xff, t->len);
	}
	return 0;	/* done synchronously */
}

/* ---- debugfs ---------------------------------------------------------- */

struct snapshot {
	size_t len;
	char text[];
};

static int snap_open(struct inode *inode, struct file *f, bool last)
{
	struct mock_spi *ms = inode->i_private;
	unsigned int n = last ? LAST_LINES : LOG_LINES, i;
	struct snapshot *s;
	unsigned long flags;

	if (!(f->f_mode & FMODE_READ)) {
		f->private_data = NULL;
		return 0;
	}
	s = kvmalloc(sizeof(*s) + (size_t)n * (LINE_LEN + 1), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->len = 0;
	spin_lock_irqsave(&ms->lock, flags);
	if (last) {
		for (i = 0; i < ms->last_count; i++)
			s->len += sprintf(s->text + s->len, "%s\n", ms->last[i]);
	} else {
		for (i = 0; i < ms->log_count; i++) {
			unsigned int k = (ms->log_head + LOG_LINES - ms->log_count + i) % LOG_LINES;

			s->len += sprintf(s->text + s->len, "%s\n", ms->log[k]);
		}
	}
	spin_unlock_irqrestore(&ms->lock, flags);
	f->private_data = s;
	return 0;
}

static int log_open(struct inode *inode, struct file *f)
{
	return snap_open(inode, f, false);
}

static int last_open(struct inode *inode, struct file *f)
{
	return snap_open(inode, f, true);
}

static ssize_t snap_read(struct file *f, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct snapshot *s = f->private_data;

	if (!s)
		return -EINVAL;
	return simple_read_from_buffer(ubuf, count, ppos, s->text, s->len);
}

static ssize_t log_write(struct file *f, const char __user *ubuf, size_t count, loff_t *ppos)
{
	struct mock_spi *ms = file_inode(f)->i_private;
	unsigned long flags;

	spin_lock_irqsave(&ms->lock, flags);
	ms->log_count = 0;
	ms->last_count = 0;
	spin_unlock_irqrestore(&ms->lock, flags);
	return count;
}

static int snap_release(struct inode *inode, struct file *f)
{
	kvfree(f->private_data);
	return 0;
}

static const struct file_operations log_fops = {
	.owner = THIS_MODULE,
	.open = log_open,
	.read = snap_read,
	.write = log_write,
	.release = snap_release,
	.llseek = default_llseek,
};

static const struct file_operations last_fops = {
	.owner = THIS_MODULE,
	.open = last_open,
	.read = snap_read,
	.release = snap_release,
	.llseek = default_llseek,
};

static int fault_get(void *data, u64 *val)
{
	*val = (u64)READ_ONCE(((struct mock_spi *)data)->fault);
	return 0;
}

static int fault_set(void *data, u64 val)
{
	if (val > 4095)
		return -EINVAL;
	WRITE_ONCE(((struct mock_spi *)data)->fault, (int)val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(fault_fops, fault_get, fault_set, "%llu\n");

/* ---- platform driver -------------------------------------------------- */

static int mock_probe(struct platform_device *pdev)
{
	struct spi_controller *ctlr;
	struct mock_spi *ms;
	unsigned int cs;
	int ret;

	ctlr = devm_spi_alloc_master(&pdev->dev, sizeof(*ms));
	if (!ctlr)
		return -ENOMEM;
	ms = spi_controller_get_devdata(ctlr);
	spin_lock_init(&ms->lock);
	ms->log = devm_kcalloc(&pdev->dev, LOG_LINES, LINE_LEN, GFP_KERNEL);
	ms->last = devm_kcalloc(&pdev->dev, LAST_LINES, LINE_LEN, GFP_KERNEL);
	if (!ms->log || !ms->last)
		return -ENOMEM;

	ctlr->bus_num = BUS_NUM;
	ctlr->num_chipselect = 2;
	ctlr->mode_bits = SPI_CPHA | SPI_CPOL | SPI_CS_HIGH | SPI_LSB_FIRST | SPI_3WIRE |
			  SPI_LOOP | SPI_NO_CS | SPI_TX_DUAL | SPI_TX_QUAD | SPI_TX_OCTAL |
			  SPI_RX_DUAL | SPI_RX_QUAD | SPI_RX_OCTAL | SPI_3WIRE_HIZ;
	ctlr->bits_per_word_mask = SPI_BPW_RANGE_MASK(4, 32);
	ctlr->max_speed_hz = 50000000;
	ctlr->min_speed_hz = 1000;
	ctlr->prepare_message = mock_prepare_message;
	ctlr->set_cs = mock_set_cs;
	ctlr->transfer_one = mock_transfer_one;

	ms->dir = debugfs_create_dir(DRV_NAME, NULL);
	debugfs_create_file("log", 0644, ms->dir, ms, &log_fops);
	debugfs_create_file("last_message", 0444, ms->dir, ms, &last_fops);
	debugfs_create_file_unsafe("fault", 0644, ms->dir, ms, &fault_fops);
	platform_set_drvdata(pdev, ms);

	ret = devm_spi_register_controller(&pdev->dev, ctlr);
	if (ret) {
		debugfs_remove_recursive(ms->dir);
		return ret;
	}
	for (cs = 0; cs < 2; cs++) {
		struct spi_board_info info = {
			.modalias = "dh2228fv",	/* in 6.1 spidev's spi_device_id table */
			.max_speed_hz = 10000000,
			.bus_num = BUS_NUM,
			.chip_select = cs,
			.mode = SPI_MODE_0,
		};

		if (!spi_new_device(ctlr, &info)) {
			debugfs_remove_recursive(ms->dir);
			return -ENODEV;	/* devres unregisters the controller and its devices */
		}
	}
	return 0;
}

static int mock_remove(struct platform_device *pdev)
{
	struct mock_spi *ms = platform_get_drvdata(pdev);

	/* The controller (and its devices) goes with devres after this; the log
	 * lives in the controller's allocation, so it outlives every transfer. */
	debugfs_remove_recursive(ms->dir);
	return 0;
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
MODULE_DESCRIPTION("parambus test VM: loopback SPI controller that records its settings");
MODULE_LICENSE("GPL");
