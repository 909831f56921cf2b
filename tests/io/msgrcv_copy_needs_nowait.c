/* SPDX-License-Identifier: MIT */
/* Description: msgrcv with MSG_COPY (Linux's peek at the message at an
 * index) on a user thread fails as the kernel's does without IPC_NOWAIT:
 * -1 with EINVAL, at once, even with a message in the queue; with
 * IPC_NOWAIT it copies the message and leaves it queued, and a plain
 * msgrcv then takes it. */
#include <sys/msg.h>

#include "io/io_util.h"

struct message {
    long type;
    char text[8];
};

int main(void)
{
    int id = msgget(IPC_PRIVATE, 0600);
    if (id < 0 && (errno == ENOSYS || errno == ENOSPC))
        return 77; /* no System V message queues here */
    CHECK_GE(id, 0);
    struct message m = { 1, "hi" };
    CHECK_EQ(msgsnd(id, &m, 3, 0), 0);

    struct message got = { 0, "" };
    errno = 0;
    CHECK_EQ(msgrcv(id, &got, sizeof got.text, 0, MSG_COPY), -1);
    CHECK_EQ(errno, EINVAL);

    CHECK_EQ(msgrcv(id, &got, sizeof got.text, 0, MSG_COPY | IPC_NOWAIT), 3);
    CHECK_EQ(strcmp(got.text, "hi"), 0);
    memset(&got, 0, sizeof got);
    CHECK_EQ(msgrcv(id, &got, sizeof got.text, 0, 0), 3); /* still queued */
    CHECK_EQ(got.type, 1);
    CHECK_EQ(strcmp(got.text, "hi"), 0);
    CHECK_EQ(msgctl(id, IPC_RMID, NULL), 0);
    return 0;
}
