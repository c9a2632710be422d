"""The wire protocol's chunked messages for the bench clients: the server sends a long
message as its count of parts (a frame of digits), then the parts; `Joiner.add` takes
each WebSocket frame and returns the whole message once it is complete (else None)."""


class Joiner:
    def __init__(self):
        self.pending, self.parts = 0, []

    def add(self, frame):
        if self.pending == 0 and len(frame) <= 6 and frame.isdigit():
            self.pending, self.parts = int(frame), []
            return None
        if not self.pending:
            return frame
        self.parts.append(frame)
        self.pending -= 1
        return None if self.pending else "".join(self.parts)
