/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * wirebookd's control requests for order detail and queue positions
 * (control.h): served with libwirebook's reader calls, so a request on the
 * socket goes through the order detail's request slots exactly as a
 * reader's wb_orders_detail / wb_queue_track does, and the builder applies
 * it between batches. Nothing here touches the builder's state.
 */
#include "common/control.h"
#include "wirebook/book.h"

#include <errno.h>
#include <string.h>

/* A libwirebook error as the errno the socket carries. */
static int wb_errno(int rc)
{
	switch (rc) {
	case WB_OK: return 0;
	case WB_ENOSYM: return -ENOENT;
	case WB_EINVAL: return -EINVAL;
	case WB_EBUSY: return -EBUSY;
	case WB_ESTALE: return -ESTALE;
	default: return -EIO;
	}
}

int wb_control_orders_attach(struct wb_control_orders *co)
{
	int err = WB_OK;

	if (!co->enabled)
		return -EOPNOTSUPP;
	if (!co->book)
		co->book = wb_open(co->shm_name, &err);
	if (co->book && !co->orders)
		co->orders = wb_orders_open(co->shm_name, &err);
	if (!co->orders)
		return err == WB_ENOSHM ? -EOPNOTSUPP : -EIO;
	return 0;
}

static int detail(struct wb_control_orders *co, struct wb_ctl_detail *d)
{
	int sym, rc;

	d->ticker[sizeof(d->ticker) - 1] = 0;
	if (!d->ticker[0] || strlen(d->ticker) > 8 || d->op > WB_CTL_DETAIL_OFF)
		return -EINVAL;
	sym = wb_find(co->book, d->ticker);
	if (sym < 0)
		return wb_errno(sym);
	d->sym = (uint32_t)sym;
	if (d->op != WB_CTL_DETAIL_QUERY) {
		if (co->source_done)
			return -ESRCH;
		rc = wb_orders_detail(co->orders, sym, d->op == WB_CTL_DETAIL_ON);
		if (rc)
			return wb_errno(rc);
	}
	rc = wb_orders_has_detail(co->orders, sym);
	if (rc < 0)
		return wb_errno(rc);
	d->has_detail = rc;
	return 0;
}

static int detail_list(struct wb_control_orders *co, struct wb_ioc_list *l)
{
	struct wb_ioc_symbol *out = (struct wb_ioc_symbol *)(uintptr_t)l->entries;
	uint32_t n = 0;

	/* wb_orders_has_detail answers WB_EINVAL past the last index. */
	for (int sym = 1;; sym++) {
		int rc = wb_orders_has_detail(co->orders, sym);

		if (rc == WB_EINVAL)
			break;
		if (rc < 0)
			return wb_errno(rc);
		if (!rc)
			continue;
		if (n < l->capacity) {
			char ticker[9] = "";

			wb_symbol(co->book, sym, ticker);
			memset(&out[n], 0, sizeof(out[n]));
			memcpy(out[n].ticker, ticker, sizeof(ticker));
			out[n].instrument = (uint32_t)sym;
		}
		n++;
	}
	l->count = n;
	return 0;
}

static int queue(struct wb_control_orders *co, struct wb_ctl_queue *q)
{
	int rc = 0;

	if (q->venue == 0 || q->venue >= WB_VENUE_COUNT || q->op > WB_CTL_QUEUE_UNTRACK)
		return -EINVAL;
	if (q->op != WB_CTL_QUEUE_POSITION) {
		if (co->source_done)
			return -ESRCH;
		rc = q->op == WB_CTL_QUEUE_TRACK ? wb_queue_track(co->orders, (int)q->venue, q->order_id) :
						   wb_queue_untrack(co->orders, (int)q->venue, q->order_id);
		if (rc)
			return wb_errno(rc);
	}
	memset(&q->pos, 0, sizeof(q->pos));
	rc = wb_queue_position(co->orders, (int)q->venue, q->order_id, &q->pos);
	q->tracked = rc == WB_OK;
	/* A position mid-update (WB_EBUSY) is a read to retry, not a full request area. */
	return rc == WB_OK || rc == WB_ENOSYM ? 0 : rc == WB_EBUSY ? -EAGAIN : wb_errno(rc);
}

int wb_control_orders_handler(void *ctx, unsigned long cmd, void *arg)
{
	struct wb_control_orders *co = ctx;
	int rc;

	if (!wb_control_socket_only(cmd))
		return co->next ? co->next(co->next_ctx, cmd, arg) : -ENOTTY;
	rc = wb_control_orders_attach(co);
	if (rc)
		return rc;
	if (cmd == WB_CTL_DETAIL)
		return detail(co, arg);
	if (cmd == WB_CTL_DETAIL_LIST)
		return detail_list(co, arg);
	return queue(co, arg);
}

void wb_control_orders_close(struct wb_control_orders *co)
{
	wb_orders_close(co->orders);
	wb_close(co->book);
	co->orders = NULL;
	co->book = NULL;
}
