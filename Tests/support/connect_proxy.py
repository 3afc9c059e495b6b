"""A minimal HTTP CONNECT proxy for the proxy tests: every CONNECT host:port is tunnelled to 127.0.0.1:port, so that a
name that does not resolve (b2c.test) reaches the emulator only through the proxy. Prints its port, then logs each
CONNECT target, one per line, to the file given as its argument. Standard library only."""
import asyncio
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(reader, writer, log):
    request = await reader.readuntil(b"\r\n\r\n")
    method, target, _ = request.split(b"\r\n", 1)[0].decode().split(" ", 2)
    with open(log, "a") as f:
        f.write(f"{method} {target}\n")
    if method != "CONNECT":
        writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()
        return
    port = int(target.rsplit(":", 1)[1])
    try:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()
        return
    writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
    await writer.drain()
    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def main():
    log = sys.argv[1]
    server = await asyncio.start_server(lambda r, w: handle(r, w, log), "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
