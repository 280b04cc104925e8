"""A TCP proxy that, while on, holds what clients send for a random time: requests overtake
one another, as on a slow network.

    jitter = Jitter(upstream_port=8333, max_s=4.0, seed=1)
    await jitter.start()          # clients connect to jitter.port
    await jitter.hold(15)         # for 15 s each chunk a client sends waits 0..4 s

bench/chaos.py puts it between the workers and S3: a write of an activity attempt that
timed out can then arrive after the write of its retry (the "zombie" write of issue 13).
"""

from __future__ import annotations

import asyncio
import random


class Jitter:
    """A TCP proxy in front of S3 for the workers. While `on`, each chunk a worker sends is held
    for a random 0..`max_s` seconds, so requests overtake one another - a slow network, the
    way a write of a timed-out attempt arrives after the write of its retry."""

    def __init__(self, upstream_port: int, max_s: float, seed: int) -> None:
        self.upstream, self.max_s, self.rnd = upstream_port, max_s, random.Random(seed)
        self.on = False
        self.port = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        except OSError:
            writer.close()
            return

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, hold: bool) -> None:
            try:
                while data := await src.read(1 << 16):
                    if hold and self.on:
                        await asyncio.sleep(self.rnd.uniform(0, self.max_s))
                    dst.write(data)
                    await dst.drain()
            except OSError:
                pass
            finally:
                dst.close()
        await asyncio.gather(pipe(reader, up_writer, True), pipe(up_reader, writer, False))

    async def hold(self, seconds: float) -> None:
        self.on = True
        try:
            await asyncio.sleep(seconds)
        finally:
            self.on = False

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
