// The one door to the NATS C client (nats.c 3.4, Debian's libnats-dev). Only FenceNATS includes
// it; the engine and the file formats never see NATS.
#ifndef CNATS_SHIM_H
#define CNATS_SHIM_H

#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>

/// Outcome counts of asynchronous JetStream publishes on one context, written by the library's
/// reply thread (through CNATS_ackHandler) and read by Swift with the atomic loads below, so
/// Swift needs no C callback. nats.c calls the handler before it decrements its pending count,
/// so once js_PublishAsyncComplete returns NATS_OK every outcome is counted.
typedef struct {
    int64_t acked;
    int64_t duplicates;
    int64_t failed;
    int lastStatus;
    int lastErrorCode;
    char lastText[256];
} CNATSPublishTally;

/// The jsPubAckHandler: counts and, as nats.h requires of this handler, destroys the message.
static void CNATS_ackHandler(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure) {
    CNATSPublishTally *t = (CNATSPublishTally *)closure;
    (void)js;
    if (pa != NULL) {
        __atomic_add_fetch(&t->acked, 1, __ATOMIC_SEQ_CST);
        if (pa->Duplicate) __atomic_add_fetch(&t->duplicates, 1, __ATOMIC_SEQ_CST);
    } else if (pae != NULL) {
        t->lastStatus = (int)pae->Err;
        t->lastErrorCode = (int)pae->ErrCode;
        snprintf(t->lastText, sizeof(t->lastText), "%s", pae->ErrText != NULL ? pae->ErrText : "");
        __atomic_add_fetch(&t->failed, 1, __ATOMIC_SEQ_CST);
    }
    natsMsg_Destroy(msg);
}

/// Routes a context's async publish outcomes into `tally` (which must outlive the context).
static inline void CNATS_installAckHandler(jsOptions *opts, CNATSPublishTally *tally) {
    opts->PublishAsync.AckHandler = CNATS_ackHandler;
    opts->PublishAsync.AckHandlerClosure = tally;
}

static inline int64_t CNATS_load(const int64_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }

#endif
