"""An HTTPS server that keeps connections (HTTP/1.1) for the client's tests: answers each
POST with "<connection number> <body>", numbering connections from 1 in the order they
were accepted. argv: port, certificate file, key file."""
import http.server
import itertools
import ssl
import sys
import threading

counter = itertools.count(1)
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        with lock:
            self.number = next(counter)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        answer = b"%d " % self.number + body
        self.send_response(200)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[2], sys.argv[3])
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
