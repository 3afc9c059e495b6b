"""A minimal HTTP proxy for the proxy tests. A CONNECT host:port is tunnelled to 127.0.0.1:port, and a request whose
target is a whole http:// URL is sent on to 127.0.0.1:port with the path alone as its target, so that a name that does
not resolve (b2c.test) reaches a local server only through the proxy; a plain request's connection ends with its
answer. By the target's host: `refuse.` is answered 407 and `deny.` 403, each with an HTML page as real proxies send;
`garble.` with bytes that are not HTTP; `silent.` not at all; `close.` by closing the connection; `drop.` with 200 and
then the connection's end. Prints its port, then logs each request, one per line, to the file given as its argument:
the method, the target and the Proxy-Authorization field (`-` without one). Standard library only."""
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


async def answer(writer, text):
    writer.write(text)
    await writer.drain()
    writer.close()


async def handle(reader, writer, log):
    request = await reader.readuntil(b"\r\n\r\n")
    first, rest = request.split(b"\r\n", 1)
    method, target, version = first.decode().split(" ", 2)
    fields = [line for line in rest.split(b"\r\n") if line]
    auth = next((f.split(b":", 1)[1].strip().decode() for f in fields if f.lower().startswith(b"proxy-authorization:")), "-")
    with open(log, "a") as f:
        f.write(f"{method} {target} {auth}\n")
    if method == "CONNECT":
        host, port = target.rsplit(":", 1)
    elif target.startswith("http://"):
        authority, _, path = target[len("http://"):].partition("/")
        host, _, port = authority.rpartition(":")
        port = port or "80"
    else:
        return await answer(writer, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    page = b"<html><body><h1>Access denied</h1>" + b"x" * 2048 + b"</body></html>"
    if host.startswith("refuse."):
        return await answer(writer, b'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="t"\r\n'
                            b"Content-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (len(page), page))
    if host.startswith("deny."):
        return await answer(writer, b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s"
                            % (len(page), page))
    if host.startswith("garble."):
        return await answer(writer, b"SSH-2.0-OpenSSH\r\n\r\n")
    if host.startswith("silent."):
        await asyncio.sleep(60)
        return
    if host.startswith("close."):
        writer.close()
        return
    if host.startswith("drop."):
        return await answer(writer, b"HTTP/1.1 200 Connection Established\r\n\r\n")
    try:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", int(port))
    except OSError:
        return await answer(writer, b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
    if method == "CONNECT":
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await writer.drain()
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        return
    # The request as the server expects it: the path alone, the proxy's credentials left out, its body; then the answer,
    # and the connection's end (a client's next request opens another).
    kept = [f for f in fields if not f.lower().startswith((b"proxy-authorization:", b"connection:"))]
    length = next((int(f.split(b":", 1)[1]) for f in fields if f.lower().startswith(b"content-length:")), 0)
    body = await reader.readexactly(length) if length else b""
    up_writer.write(f"{method} /{path} {version}\r\n".encode() + b"".join(f + b"\r\n" for f in kept)
                    + b"Connection: close\r\n\r\n" + body)
    await up_writer.drain()
    await pipe(up_reader, writer)


async def main():
    log = sys.argv[1]
    server = await asyncio.start_server(lambda r, w: handle(r, w, log), "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
