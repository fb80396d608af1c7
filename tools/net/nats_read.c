/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* A day back from the NATS stream of normalized events; see nats_read.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/nats_read.h"

#ifndef WB_NATS
struct nats_reader *nats_reader_open(const struct nats_read_config *cfg, char *err, size_t errlen)
{
	(void)cfg;
	snprintf(err, errlen, "this build has no NATS client (install libnats-dev and rebuild)");
	return NULL;
}

int nats_reader_read(struct nats_reader *r, struct wb_event *out, unsigned max, char *err,
		     size_t errlen)
{
	(void)r;
	(void)out;
	(void)max;
	snprintf(err, errlen, "no NATS");
	return -1;
}

void nats_reader_counts(const struct nats_reader *r, struct nats_read_counts *c)
{
	(void)r;
	memset(c, 0, sizeof(*c));
}

void nats_reader_close(struct nats_reader *r)
{
	(void)r;
}
#else
#include "net/nats_batch.h"
#include "net/nats_order.h"

struct nats_reader {
	struct nats_read_config cfg;
	struct nats_client_counters cc;
	natsConnection *nc;
	jsCtx *js;
	natsSubscription *sub;
	char subject[256];
	uint64_t run;		/* the publisher run being handed over */
	uint64_t next;		/* its next global index; 0: not known yet (a later range) */
	int read_all;		/* the range's last message came: hand over what is held */
	natsMsg *aside;		/* a later run's first message, while the earlier one's are held */
	int aside_last;		/* it is the range's last */
	int ended;
	struct nats_order held;	/* batches received, not handed over in full */
	struct nats_read_counts ctr;
};

/* Move the top batch k events on (k: at most what is left of its run). */
static void advance_top(struct nats_reader *r, uint32_t k)
{
	if (nats_order_advance(&r->held, k))
		r->ctr.batches++;
}

/* Only some of the stream's messages: holes are expected. */
static int ranged(const struct nats_reader *r)
{
	return r->cfg.first_seq > 1 || r->cfg.last_seq;
}

/* Hand over, in the origin's order, up to max held events: up to the
 * first one missing, or (the range read, or too many held) past it. */
static unsigned drain(struct nats_reader *r, struct wb_event *out, unsigned max)
{
	unsigned n = 0;

	if (!r->next) {	/* a later range: start at the smallest index of the first batches */
		if (!r->held.n || (r->held.n < NATS_READ_PRIME && !r->read_all))
			return 0;
		r->next = nats_order_top(&r->held)->key;
	}
	while (r->held.n && n < max) {
		struct nats_held *c = nats_order_top(&r->held);
		uint64_t left = c->r.count - c->off, k, i;

		if (c->key < r->next) {
			k = r->next - c->key < left ? r->next - c->key : left;
			if (r->ctr.runs == 1 && r->cfg.first_seq > 1) {
				/* before the range's first: the origin applied it earlier */
				k = k < max - n ? k : max - n;
				for (i = 0; i < k; i++)
					memcpy(&out[n++], nats_batch_event_at(c->data, &c->h, c->ev + (uint32_t)i),
					       sizeof(*out));
				r->ctr.early += k;
				r->ctr.events += k;
			} else {
				r->ctr.duplicates += k;
			}
			advance_top(r, (uint32_t)k);
			continue;
		}
		if (c->key > r->next) {
			/* In a range, a hole is mostly another line's batch outside
			 * it: waited for briefly, not called lost. */
			if (r->held.n < (ranged(r) ? NATS_READ_PRIME : NATS_READ_HOLD_MAX) &&
			    !r->read_all)
				break;	/* wait for the missing one */
			if (ranged(r)) {
				r->ctr.outside += c->key - r->next;
			} else {
				if (r->ctr.lost_holes++ < 10)
					fprintf(stderr, "nats: events %llu-%llu of the publisher's run are "
						"not in the stream: skipped\n", (unsigned long long)r->next,
						(unsigned long long)c->key - 1);
				r->ctr.lost += c->key - r->next;
			}
			r->next = c->key;
		}
		k = left < max - n ? left : max - n;
		for (i = 0; i < k; i++)
			memcpy(&out[n++], nats_batch_event_at(c->data, &c->h, c->ev + (uint32_t)i),
			       sizeof(*out));
		r->next += k;
		r->ctr.events += k;
		advance_top(r, (uint32_t)k);
	}
	return n;
}

/* Where a message sits in the stream; 1 when it is the range's last. */
static int note_meta(struct nats_reader *r, natsMsg *m)
{
	jsMsgMetaData *meta = NULL;
	int last = 0;

	r->ctr.messages++;
	r->ctr.bytes += (uint64_t)natsMsg_GetDataLength(m);
	if (natsMsg_GetMetaData(&meta, m) != NATS_OK)
		return 0;
	if (!r->ctr.first_seq) {
		r->ctr.first_seq = meta->Sequence.Stream;
		snprintf(r->ctr.stream, sizeof(r->ctr.stream), "%s", meta->Stream);
	}
	r->ctr.last_seq = meta->Sequence.Stream;
	last = !meta->NumPending || (r->cfg.last_seq && meta->Sequence.Stream >= r->cfg.last_seq);
	jsMsgMetaData_Destroy(meta);
	return last;
}

/* One message: held, freed, or (a later publisher run's, while the
 * earlier one's events are held) kept aside until those are handed over. */
static void take(struct nats_reader *r, natsMsg *m)
{
	const uint8_t *data = (const uint8_t *)natsMsg_GetData(m);
	size_t len = (size_t)natsMsg_GetDataLength(m);
	struct nats_batch_header h;
	char err[160];

	if (nats_batch_parse(data, len, &h, err, sizeof(err)) < 0) {
		if (!r->ctr.bad)
			fprintf(stderr, "nats: %s on %s: skipped\n", err, natsMsg_GetSubject(m));
		r->ctr.bad++;
		natsMsg_Destroy(m);
		return;
	}
	if (h.run != r->run) {
		if (h.run < r->run) {	/* an earlier run's resend */
			r->ctr.stale++;
			natsMsg_Destroy(m);
			return;
		}
		if (r->run && r->held.n) {
			r->aside = m;
			return;
		}
		r->ctr.runs++;
		r->run = h.run;
		/* A later range's first run starts where its first batches do. */
		r->next = r->ctr.runs == 1 && r->cfg.first_seq > 1 ? 0 : 1;
	}
	if (h.flags & NATS_BATCH_END || !h.count) {
		natsMsg_Destroy(m);
		return;
	}
	if (nats_order_push(&r->held, m, data, &h) < 0)
		r->ctr.bad++;	/* out of memory: the batch is gone, its events a hole */
}

struct nats_reader *nats_reader_open(const struct nats_read_config *cfg, char *err, size_t errlen)
{
	struct nats_reader *r = calloc(1, sizeof(*r));
	char servers[1024], stream[256], inst[64];
	jsSubOptions so;
	jsErrCode jerr = 0;
	natsStatus st;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->cfg = *cfg;
	if (!r->cfg.wait_ms)
		r->cfg.wait_ms = 10000;
	if (nats_url_split(cfg->client.url, servers, sizeof(servers), stream, sizeof(stream), err,
			   errlen))
		goto fail;
	r->nc = nats_client_connect(&r->cfg.client, "wb-export", &r->cc, err, errlen);
	if (!r->nc)
		goto fail;
	if (natsConnection_JetStream(&r->js, r->nc, NULL) != NATS_OK) {
		snprintf(err, errlen, "no JetStream context");
		goto fail;
	}
	if (stream[0]) {
		jsStreamInfo *si = NULL;

		st = js_GetStreamInfo(&si, r->js, stream, NULL, &jerr);
		if (st != NATS_OK) {
			snprintf(err, errlen, "stream %s: %s", stream, nats_GetLastError(NULL) ?
				 nats_GetLastError(NULL) : natsStatus_GetText(st));
			goto fail;
		}
		if (si->Config && si->Config->SubjectsLen > 0)
			snprintf(r->subject, sizeof(r->subject), "%s", si->Config->Subjects[0]);
		/* Nothing to read: said by the caller (no events). */
		if (!si->State.Msgs || si->State.LastSeq < cfg->first_seq ||
		    (cfg->last_seq && cfg->last_seq < si->State.FirstSeq))
			r->ended = 1;
		jsStreamInfo_Destroy(si);
		if (!r->subject[0]) {
			snprintf(err, errlen, "stream %s has no subjects", stream);
			goto fail;
		}
	} else {
		nats_subject_token(inst, sizeof(inst), cfg->client.instance ? cfg->client.instance
									     : "wirebook");
		snprintf(r->subject, sizeof(r->subject), "wirebook.%s.events.>", inst);
	}
	if (r->ended)
		return r;
	jsSubOptions_Init(&so);
	so.Ordered = true;
	if (stream[0])
		so.Stream = stream;
	if (cfg->first_seq > 1) {
		so.Config.DeliverPolicy = js_DeliverByStartSequence;
		so.Config.OptStartSeq = cfg->first_seq;
	}
	st = js_SubscribeSync(&r->sub, r->js, r->subject, NULL, &so, &jerr);
	if (st != NATS_OK) {
		snprintf(err, errlen, "%s: %s", r->subject, nats_GetLastError(NULL) ?
			 nats_GetLastError(NULL) : natsStatus_GetText(st));
		r->sub = NULL;
		goto fail;
	}
	natsSubscription_SetPendingLimits(r->sub, 1 << 20, 512 << 20);
	return r;
fail:
	nats_reader_close(r);
	return NULL;
}

int nats_reader_read(struct nats_reader *r, struct wb_event *out, unsigned max, char *err,
		     size_t errlen)
{
	for (;;) {
		unsigned n = drain(r, out, max);
		natsMsg *m = NULL;
		natsStatus st;

		if (n)
			return (int)n;
		if (r->aside && !r->held.n) {	/* the earlier run handed over: the next one */
			m = r->aside;
			r->aside = NULL;
			r->read_all = r->aside_last;
			take(r, m);
			continue;
		}
		if (r->read_all && !r->held.n)
			r->ended = 1;
		if (r->ended)
			return 0;
		if (r->aside || r->read_all)
			continue;	/* drain hands the held events over, holes skipped */
		st = natsSubscription_NextMsg(&m, r->sub, r->cfg.wait_ms);
		if (st == NATS_TIMEOUT) {
			if (!r->ctr.messages) {	/* an empty stream, or none of the range */
				r->ended = 1;
				return 0;
			}
			snprintf(err, errlen, "the NATS server sent nothing for %u ms (stream %s, after "
				 "sequence %llu)", r->cfg.wait_ms, r->ctr.stream,
				 (unsigned long long)r->ctr.last_seq);
			return -1;
		}
		if (st != NATS_OK) {
			natsMsg_Destroy(m);
			if (st == NATS_SLOW_CONSUMER)
				continue;	/* the ordered consumer refetches */
			snprintf(err, errlen, "reading %s: %s", r->subject, natsStatus_GetText(st));
			return -1;
		}
		if (note_meta(r, m))
			r->read_all = 1;
		take(r, m);
		if (r->aside) {	/* hand the earlier run over first, holes skipped */
			r->aside_last = r->read_all;
			r->read_all = 1;
		}
	}
}

void nats_reader_counts(const struct nats_reader *r, struct nats_read_counts *c)
{
	*c = r->ctr;
}

void nats_reader_close(struct nats_reader *r)
{
	if (!r)
		return;
	nats_order_free(&r->held);
	natsMsg_Destroy(r->aside);
	if (r->sub)
		natsSubscription_Destroy(r->sub);
	if (r->nc)
		nats_client_close(r->nc, &r->cc);
	jsCtx_Destroy(r->js);
	free(r);
}
#endif
