// SPDX-License-Identifier: GPL-2.0
/*
 * pbus-mock-i2c: an I2C adapter with register-file devices, for the
 * parambus kernel test VM.
 *
 * i2c-stub cannot do plain I2C messages, 10-bit addresses, SMBus block
 * transfers or PEC, so libparambus-hw's I2C code needs an adapter that can.
 * This one implements both master_xfer (I2C_RDWR, any number of messages
 * with repeated start) and a native smbus_xfer, which turns every SMBus
 * transfer into the wire messages a real SMBus controller would send (with
 * the PEC byte when asked) and runs them against the same devices. Every
 * transfer is recorded message by message, so a test can prove what went on
 * the wire ("one message, not two"), and faults can be injected: see
 * tests/kernel/ENVIRONMENT.md, section 4, which is the specification of the
 * devices, the debugfs files and their formats.
 */

#include <linux/debugfs.h>
#include <linux/i2c.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#define DRV_NAME "pbus-mock-i2c"

#define LOG_DEPTH 64		/* transfers kept in "xfers" */
#define LOG_MSGS 42		/* I2C_RDWR_IOCTL_MAX_MSGS */
#define LOG_BYTES 64		/* bytes of data kept per message */

#define MOCK_FUNC (I2C_FUNC_I2C | I2C_FUNC_10BIT_ADDR | I2C_FUNC_SMBUS_EMUL | \
		   I2C_FUNC_SMBUS_READ_BLOCK_DATA | I2C_FUNC_SMBUS_BLOCK_PROC_CALL)

enum mock_fault { FAULT_NONE, FAULT_NAK, FAULT_TIMEOUT, FAULT_BUSY, FAULT_BAD_PEC };
static const char *const fault_names[] = { "none", "nak", "timeout", "busy", "bad-pec" };

enum mock_kind { KIND_REG8, KIND_EEPROM16 };

struct mock_dev {
	u16 addr;
	bool ten;
	enum mock_kind kind;
	unsigned int size;
	unsigned int ptr_bytes;
	u32 ptr;
	bool present;
	u8 *mem;
	struct mock_i2c *mock;
	char name[8];
};

struct log_msg {
	u16 addr, flags, len, done;
	u8 data[LOG_BYTES];
};

struct log_rec {
	u64 seq;
	bool smbus;
	int ret;
	u8 read_write, command;
	int size;
	bool pec;
	unsigned int nmsgs;
	struct log_msg msgs[LOG_MSGS];
};

struct mock_i2c {
	struct i2c_adapter adap;
	struct mutex lock;	/* devices, log, fault */
	struct mock_dev devs[4];
	enum mock_fault fault;
	u64 seq;
	struct log_rec *log;	/* ring of LOG_DEPTH */
	unsigned int log_head, log_count;
	struct log_rec cur;
	struct dentry *dir;
};

/* CRC-8, polynomial x^8 + x^2 + x + 1, as SMBus PEC. */
static u8 pec_byte(u8 crc, u8 b)
{
	int i;

	crc ^= b;
	for (i = 0; i < 8; i++)
		crc = (crc & 0x80) ? (u8)((crc << 1) ^ 0x07) : (u8)(crc << 1);
	return crc;
}

/* The address byte(s) a message puts on the wire, folded into the PEC. */
static u8 pec_addr(u8 crc, const struct i2c_msg *msg)
{
	bool rd = msg->flags & I2C_M_RD;

	if (msg->flags & I2C_M_TEN) {
		u8 hi = 0xf0 | ((msg->addr >> 7) & 0x06);

		if (rd)
			return pec_byte(crc, hi | 1);
		crc = pec_byte(crc, hi);
		return pec_byte(crc, msg->addr & 0xff);
	}
	return pec_byte(crc, (u8)((msg->addr << 1) | (rd ? 1 : 0)));
}

static void dev_reset(struct mock_dev *d)
{
	unsigned int i;

	for (i = 0; i < d->size; i++) {
		if (d->addr == 0x49)
			d->mem[i] = (u8)(0xff - i);
		else
			d->mem[i] = (u8)i;
	}
	d->ptr = 0;
}

static struct mock_dev *find_dev(struct mock_i2c *m, u16 addr, bool ten)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(m->devs); i++)
		if (m->devs[i].addr == addr && m->devs[i].ten == ten)
			return &m->devs[i];
	return NULL;
}

/*
 * One message against the device it addresses. *crc accumulates the PEC of
 * the transaction; pec_tail says that the last byte of this message is the
 * PEC (checked and not stored for a write, produced for a read). *done gets
 * the number of bytes actually transferred.
 */
static int do_msg(struct mock_i2c *m, struct i2c_msg *msg, u8 *crc, bool pec_tail,
		  unsigned int *done)
{
	struct mock_dev *d = find_dev(m, msg->addr, msg->flags & I2C_M_TEN);
	unsigned int i, start = 0, n;

	*done = 0;
	if (!d || !d->present || m->fault == FAULT_NAK)
		return -ENXIO;
	*crc = pec_addr(*crc, msg);

	if (msg->flags & I2C_M_RD) {
		if (msg->flags & I2C_M_RECV_LEN) {
			u8 count = d->mem[d->ptr];

			d->ptr = (d->ptr + 1) % d->size;
			msg->buf[0] = count;
			*crc = pec_byte(*crc, count);
			*done = 1;
			if (count == 0 || count > I2C_SMBUS_BLOCK_MAX)
				return -EPROTO;
			msg->len += count;
			start = 1;
		}
		n = pec_tail ? msg->len - 1u : msg->len;
		for (i = start; i < n; i++) {
			msg->buf[i] = d->mem[d->ptr];
			d->ptr = (d->ptr + 1) % d->size;
			*crc = pec_byte(*crc, msg->buf[i]);
			*done = i + 1;
		}
		if (pec_tail) {
			msg->buf[n] = *crc ^ (m->fault == FAULT_BAD_PEC ? 0xff : 0x00);
			*done = msg->len;
		}
		return 0;
	}

	n = msg->len;
	if (pec_tail) {
		u8 c = *crc;

		if (n == 0)
			return -EINVAL;
		n--;
		for (i = 0; i < n; i++)
			c = pec_byte(c, msg->buf[i]);
		if (c != msg->buf[n])
			return -EBADMSG;	/* a real device NAKs a bad PEC */
	}
	for (i = 0; i < n; i++) {
		u8 b = msg->buf[i];

		*crc = pec_byte(*crc, b);
		if (i < d->ptr_bytes) {
			if (d->ptr_bytes == 2 && i == 0)
				d->ptr = (u32)b << 8;
			else if (d->ptr_bytes == 2)
				d->ptr |= b;
			else
				d->ptr = b;
			d->ptr %= d->size;
		} else {
			d->mem[d->ptr] = b;
			d->ptr = (d->ptr + 1) % d->size;
		}
		*done = i + 1;
	}
	*done = msg->len;
	return 0;
}

static void log_msg_fill(struct log_msg *l, const struct i2c_msg *msg, unsigned int done)
{
	l->addr = msg->addr;
	l->flags = msg->flags & ~I2C_M_DMA_SAFE;	/* added by i2c-dev, not by the user */
	l->len = msg->len;
	l->done = (u16)done;
	memcpy(l->data, msg->buf, min_t(unsigned int, done, LOG_BYTES));
}

static void log_commit(struct mock_i2c *m)
{
	m->cur.seq = ++m->seq;
	m->log[m->log_head] = m->cur;
	m->log_head = (m->log_head + 1) % LOG_DEPTH;
	if (m->log_count < LOG_DEPTH)
		m->log_count++;
}

static int fault_errno(struct mock_i2c *m)
{
	if (m->fault == FAULT_TIMEOUT)
		return -ETIMEDOUT;
	if (m->fault == FAULT_BUSY)
		return -EAGAIN;
	return 0;
}

static int run_msgs(struct mock_i2c *m, struct i2c_msg *msgs, int num, bool pec)
{
	u8 crc = 0;
	int i, ret = fault_errno(m);
	unsigned int done;

	m->cur.nmsgs = min(num, LOG_MSGS);
	for (i = 0; i < num; i++) {
		done = 0;
		if (!ret)
			ret = do_msg(m, &msgs[i], &crc, pec && i == num - 1, &done);
		if (i < LOG_MSGS)
			log_msg_fill(&m->cur.msgs[i], &msgs[i], ret ? done : msgs[i].len);
		if (ret) {
			m->cur.nmsgs = min(i + 1, LOG_MSGS);
			break;
		}
	}
	return ret;
}

static int mock_master_xfer(struct i2c_adapter *adap, struct i2c_msg *msgs, int num)
{
	struct mock_i2c *m = i2c_get_adapdata(adap);
	int ret;

	mutex_lock(&m->lock);
	memset(&m->cur, 0, sizeof(m->cur));
	ret = run_msgs(m, msgs, num, false);
	m->cur.ret = ret ? ret : num;
	log_commit(m);
	mutex_unlock(&m->lock);
	return ret ? ret : num;
}

/* Check the PEC byte at the end of a read: recompute it over the wire. */
static int check_read_pec(struct i2c_msg *msgs, int num)
{
	u8 crc = 0;
	int i, j;

	for (i = 0; i < num; i++) {
		int n = msgs[i].len - (i == num - 1 ? 1 : 0);

		crc = pec_addr(crc, &msgs[i]);
		for (j = 0; j < n; j++)
			crc = pec_byte(crc, msgs[i].buf[j]);
	}
	return crc == msgs[num - 1].buf[msgs[num - 1].len - 1] ? 0 : -EBADMSG;
}

static int mock_smbus_xfer(struct i2c_adapter *adap, u16 addr, unsigned short flags,
			   char read_write, u8 command, int size, union i2c_smbus_data *data)
{
	struct mock_i2c *m = i2c_get_adapdata(adap);
	u8 wbuf[I2C_SMBUS_BLOCK_MAX + 3], rbuf[I2C_SMBUS_BLOCK_MAX + 2];
	struct i2c_msg msgs[2] = {
		{ .addr = addr, .flags = flags & I2C_M_TEN, .len = 1, .buf = wbuf },
		{ .addr = addr, .flags = (flags & I2C_M_TEN) | I2C_M_RD, .len = 0, .buf = rbuf },
	};
	bool pec = (flags & I2C_CLIENT_PEC) && size != I2C_SMBUS_QUICK &&
		   size != I2C_SMBUS_I2C_BLOCK_DATA;
	bool rd = read_write == I2C_SMBUS_READ;
	int num = 1, ret, i, n;

	wbuf[0] = command;
	switch (size) {
	case I2C_SMBUS_QUICK:
		msgs[0].len = 0;
		if (rd)
			msgs[0].flags |= I2C_M_RD;
		break;
	case I2C_SMBUS_BYTE:
		if (rd) {
			msgs[0] = msgs[1];
			msgs[0].len = 1;
		}
		break;
	case I2C_SMBUS_BYTE_DATA:
		if (rd) {
			num = 2;
			msgs[1].len = 1;
		} else {
			msgs[0].len = 2;
			wbuf[1] = data->byte;
		}
		break;
	case I2C_SMBUS_WORD_DATA:
	case I2C_SMBUS_PROC_CALL:
		if (rd && size == I2C_SMBUS_WORD_DATA) {
			num = 2;
			msgs[1].len = 2;
			break;
		}
		msgs[0].len = 3;
		wbuf[1] = data->word & 0xff;
		wbuf[2] = data->word >> 8;
		if (size == I2C_SMBUS_PROC_CALL) {
			num = 2;
			msgs[1].len = 2;
			rd = true;
		}
		break;
	case I2C_SMBUS_BLOCK_DATA:
	case I2C_SMBUS_BLOCK_PROC_CALL:
		if (!rd || size == I2C_SMBUS_BLOCK_PROC_CALL) {
			if (data->block[0] > I2C_SMBUS_BLOCK_MAX)
				return -EINVAL;
			msgs[0].len = data->block[0] + 2;
			memcpy(wbuf + 1, data->block, data->block[0] + 1);
		}
		if (rd || size == I2C_SMBUS_BLOCK_PROC_CALL) {
			num = 2;
			msgs[1].flags |= I2C_M_RECV_LEN;
			msgs[1].len = 1;
			rd = true;
		}
		break;
	case I2C_SMBUS_I2C_BLOCK_BROKEN:
	case I2C_SMBUS_I2C_BLOCK_DATA:
		if (data->block[0] > I2C_SMBUS_BLOCK_MAX || (rd && data->block[0] == 0))
			return -EINVAL;
		if (rd) {
			num = 2;
			msgs[1].len = data->block[0];
		} else {
			msgs[0].len = data->block[0] + 1;
			memcpy(wbuf + 1, data->block + 1, data->block[0]);
		}
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (pec)
		msgs[num - 1].len++;	/* room for the PEC byte; written by do_msg */
	if (pec && !(msgs[num - 1].flags & I2C_M_RD)) {
		/* A write-only transfer ends with the PEC the controller computes. */
		u8 crc = pec_addr(0, &msgs[0]);

		for (i = 0; i < msgs[0].len - 1; i++)
			crc = pec_byte(crc, wbuf[i]);
		wbuf[msgs[0].len - 1] = crc;
	}

	mutex_lock(&m->lock);
	memset(&m->cur, 0, sizeof(m->cur));
	m->cur.smbus = true;
	m->cur.read_write = read_write;
	m->cur.command = command;
	m->cur.size = size;
	m->cur.pec = pec;
	ret = run_msgs(m, msgs, num, pec);
	if (!ret && pec && (msgs[num - 1].flags & I2C_M_RD))
		ret = check_read_pec(msgs, num);
	m->cur.ret = ret;
	log_commit(m);
	mutex_unlock(&m->lock);
	if (ret)
		return ret;

	if (!rd)
		return 0;
	switch (size) {
	case I2C_SMBUS_BYTE:
		data->byte = msgs[0].buf[0];
		break;
	case I2C_SMBUS_BYTE_DATA:
		data->byte = rbuf[0];
		break;
	case I2C_SMBUS_WORD_DATA:
	case I2C_SMBUS_PROC_CALL:
		data->word = rbuf[0] | (rbuf[1] << 8);
		break;
	case I2C_SMBUS_BLOCK_DATA:
	case I2C_SMBUS_BLOCK_PROC_CALL:
		n = rbuf[0];
		memcpy(data->block, rbuf, n + 1);
		break;
	case I2C_SMBUS_I2C_BLOCK_BROKEN:
	case I2C_SMBUS_I2C_BLOCK_DATA:
		memcpy(data->block + 1, rbuf, data->block[0]);
		break;
	}
	return 0;
}

static u32 mock_functionality(struct i2c_adapter *adap)
{
	return MOCK_FUNC;
}

static const struct i2c_algorithm mock_algo = {
	.master_xfer = mock_master_xfer,
	.smbus_xfer = mock_smbus_xfer,
	.functionality = mock_functionality,
};

/* ---- debugfs ---------------------------------------------------------- */

static size_t print_rec(char *buf, size_t size, const struct log_rec *r)
{
	size_t o = 0;
	unsigned int i, j;

	o += scnprintf(buf + o, size - o, "seq=%llu kind=%s ret=%d nmsgs=%u",
		       r->seq, r->smbus ? "smbus" : "i2c", r->ret, r->nmsgs);
	if (r->smbus)
		o += scnprintf(buf + o, size - o, " rw=%s command=0x%02x size=%d pec=%d",
			       r->read_write == I2C_SMBUS_READ ? "read" : "write",
			       r->command, r->size, r->pec ? 1 : 0);
	o += scnprintf(buf + o, size - o, "\n");
	for (i = 0; i < r->nmsgs; i++) {
		const struct log_msg *l = &r->msgs[i];

		o += scnprintf(buf + o, size - o, "msg=%u addr=0x%02x flags=0x%04x len=%u data=",
			       i, l->addr, l->flags, l->len);
		for (j = 0; j < l->done && j < LOG_BYTES; j++)
			o += scnprintf(buf + o, size - o, "%s%02x", j ? " " : "", l->data[j]);
		if (l->done > LOG_BYTES)
			o += scnprintf(buf + o, size - o, " ...");
		o += scnprintf(buf + o, size - o, "\n");
	}
	return o;
}

#define REC_TEXT (64 + LOG_MSGS * (64 + LOG_BYTES * 3 + 8))

static ssize_t last_xfer_read(struct file *f, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct mock_i2c *m = f->private_data;
	char *buf = kvmalloc(REC_TEXT, GFP_KERNEL);
	size_t n = 0;
	ssize_t ret;

	if (!buf)
		return -ENOMEM;
	mutex_lock(&m->lock);
	if (m->log_count)
		n = print_rec(buf, REC_TEXT, &m->log[(m->log_head + LOG_DEPTH - 1) % LOG_DEPTH]);
	mutex_unlock(&m->lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, buf, n);
	kvfree(buf);
	return ret;
}

static const struct file_operations last_xfer_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = last_xfer_read,
	.llseek = default_llseek,
};

/* "xfers" is rendered at open, so that a reader sees one consistent snapshot. */
static int xfers_open(struct inode *inode, struct file *f)
{
	struct mock_i2c *m = inode->i_private;
	size_t size = (size_t)LOG_DEPTH * REC_TEXT, n = 0;
	unsigned int i;
	char *buf;

	if ((f->f_mode & FMODE_WRITE) && !(f->f_mode & FMODE_READ)) {
		f->private_data = NULL;
		return 0;
	}
	buf = kvmalloc(size + sizeof(size_t), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&m->lock);
	for (i = 0; i < m->log_count; i++) {
		unsigned int k = (m->log_head + LOG_DEPTH - m->log_count + i) % LOG_DEPTH;

		n += print_rec(buf + sizeof(size_t) + n, size - n, &m->log[k]);
	}
	mutex_unlock(&m->lock);
	memcpy(buf, &n, sizeof(n));
	f->private_data = buf;
	return 0;
}

static ssize_t xfers_read(struct file *f, char __user *ubuf, size_t count, loff_t *ppos)
{
	char *buf = f->private_data;
	size_t n;

	if (!buf)
		return -EINVAL;
	memcpy(&n, buf, sizeof(n));
	return simple_read_from_buffer(ubuf, count, ppos, buf + sizeof(size_t), n);
}

static ssize_t xfers_write(struct file *f, const char __user *ubuf, size_t count, loff_t *ppos)
{
	struct mock_i2c *m = file_inode(f)->i_private;

	mutex_lock(&m->lock);
	m->log_count = 0;
	mutex_unlock(&m->lock);
	return count;
}

static int xfers_release(struct inode *inode, struct file *f)
{
	kvfree(f->private_data);
	return 0;
}

static const struct file_operations xfers_fops = {
	.owner = THIS_MODULE,
	.open = xfers_open,
	.read = xfers_read,
	.write = xfers_write,
	.release = xfers_release,
	.llseek = default_llseek,
};

static ssize_t fault_read(struct file *f, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct mock_i2c *m = f->private_data;
	char buf[16];
	int n = scnprintf(buf, sizeof(buf), "%s\n", fault_names[m->fault]);

	return simple_read_from_buffer(ubuf, count, ppos, buf, n);
}

static ssize_t fault_write(struct file *f, const char __user *ubuf, size_t count, loff_t *ppos)
{
	struct mock_i2c *m = f->private_data;
	char buf[16];
	int i;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = 0;
	i = sysfs_match_string(fault_names, buf);
	if (i < 0)
		return -EINVAL;
	mutex_lock(&m->lock);
	m->fault = i;
	mutex_unlock(&m->lock);
	return count;
}

static const struct file_operations fault_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = fault_read,
	.write = fault_write,
	.llseek = default_llseek,
};

/* "reset": every device back to its initial content, present; no fault; no log. */
static ssize_t reset_write(struct file *f, const char __user *ubuf, size_t count, loff_t *ppos)
{
	struct mock_i2c *m = f->private_data;
	unsigned int i;

	mutex_lock(&m->lock);
	for (i = 0; i < ARRAY_SIZE(m->devs); i++) {
		dev_reset(&m->devs[i]);
		m->devs[i].present = true;
	}
	m->fault = FAULT_NONE;
	m->log_count = 0;
	mutex_unlock(&m->lock);
	return count;
}

static const struct file_operations reset_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = reset_write,
	.llseek = default_llseek,
};

static ssize_t regs_read(struct file *f, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct mock_dev *d = f->private_data;
	size_t size = d->size / 16 * 56 + 16, o = 0;
	unsigned int i;
	ssize_t ret;
	char *buf = kvmalloc(size, GFP_KERNEL);

	if (!buf)
		return -ENOMEM;
	mutex_lock(&d->mock->lock);
	for (i = 0; i < d->size; i++) {
		if (i % 16 == 0)
			o += scnprintf(buf + o, size - o, d->size > 256 ? "%03x:" : "%02x:", i);
		o += scnprintf(buf + o, size - o, " %02x%s", d->mem[i], i % 16 == 15 ? "\n" : "");
	}
	mutex_unlock(&d->mock->lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, buf, o);
	kvfree(buf);
	return ret;
}

static ssize_t regs_write(struct file *f, const char __user *ubuf, size_t count, loff_t *ppos)
{
	struct mock_dev *d = f->private_data;
	char *buf, *p, *tok;
	unsigned int v, off = 0;
	bool first = true;
	int ret = 0;

	if (count > 4096)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	mutex_lock(&d->mock->lock);
	if (sysfs_streq(buf, "reset")) {
		dev_reset(d);
		goto out;
	}
	p = strim(buf);
	while ((tok = strsep(&p, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		ret = kstrtouint(tok, 16, &v);
		if (ret)
			break;
		if (first) {
			if (v >= d->size) {
				ret = -EINVAL;
				break;
			}
			off = v;
			first = false;
			continue;
		}
		if (v > 0xff) {
			ret = -EINVAL;
			break;
		}
		d->mem[off] = (u8)v;
		off = (off + 1) % d->size;
	}
out:
	mutex_unlock(&d->mock->lock);
	kfree(buf);
	return ret ? ret : (ssize_t)count;
}

static const struct file_operations regs_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = regs_read,
	.write = regs_write,
	.llseek = default_llseek,
};

/* ---- platform driver -------------------------------------------------- */

static const struct {
	u16 addr;
	bool ten;
	enum mock_kind kind;
} dev_table[] = {
	{ 0x48, false, KIND_REG8 },
	{ 0x49, false, KIND_REG8 },
	{ 0x51, false, KIND_EEPROM16 },
	{ 0x2a5, true, KIND_REG8 },
};

static int mock_probe(struct platform_device *pdev)
{
	struct mock_i2c *m;
	unsigned int i;
	int ret;

	m = devm_kzalloc(&pdev->dev, sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->log = devm_kcalloc(&pdev->dev, LOG_DEPTH, sizeof(*m->log), GFP_KERNEL);
	if (!m->log)
		return -ENOMEM;
	mutex_init(&m->lock);
	for (i = 0; i < ARRAY_SIZE(dev_table); i++) {
		struct mock_dev *d = &m->devs[i];

		d->addr = dev_table[i].addr;
		d->ten = dev_table[i].ten;
		d->kind = dev_table[i].kind;
		d->size = d->kind == KIND_EEPROM16 ? 4096 : 256;
		d->ptr_bytes = d->kind == KIND_EEPROM16 ? 2 : 1;
		d->present = true;
		d->mock = m;
		d->mem = devm_kzalloc(&pdev->dev, d->size, GFP_KERNEL);
		if (!d->mem)
			return -ENOMEM;
		snprintf(d->name, sizeof(d->name), "0x%02x", d->addr);
		dev_reset(d);
	}

	m->adap.owner = THIS_MODULE;
	m->adap.class = 0;	/* no probing of hwmon drivers on our addresses */
	m->adap.algo = &mock_algo;
	m->adap.dev.parent = &pdev->dev;
	m->adap.nr = -1;
	strscpy(m->adap.name, DRV_NAME, sizeof(m->adap.name));
	i2c_set_adapdata(&m->adap, m);

	m->dir = debugfs_create_dir(DRV_NAME, NULL);
	debugfs_create_file("last_xfer", 0444, m->dir, m, &last_xfer_fops);
	debugfs_create_file("xfers", 0644, m->dir, m, &xfers_fops);
	debugfs_create_file("fault", 0644, m->dir, m, &fault_fops);
	debugfs_create_file("reset", 0200, m->dir, m, &reset_fops);
	for (i = 0; i < ARRAY_SIZE(m->devs); i++) {
		struct mock_dev *d = &m->devs[i];
		struct dentry *dd = debugfs_create_dir(d->name, m->dir);

		debugfs_create_file("regs", 0644, dd, d, &regs_fops);
		debugfs_create_x32("pointer", 0444, dd, &d->ptr);
		debugfs_create_bool("present", 0644, dd, &d->present);
	}

	ret = i2c_add_adapter(&m->adap);
	if (ret) {
		debugfs_remove_recursive(m->dir);
		return ret;
	}
	platform_set_drvdata(pdev, m);
	return 0;
}

static int mock_remove(struct platform_device *pdev)
{
	struct mock_i2c *m = platform_get_drvdata(pdev);

	i2c_del_adapter(&m->adap);
	debugfs_remove_recursive(m->dir);
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
MODULE_DESCRIPTION("parambus test VM: I2C adapter with register-file devices");
MODULE_LICENSE("GPL");
