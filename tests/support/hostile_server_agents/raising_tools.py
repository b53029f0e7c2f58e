"""Hostile: arguments that once raised out of the environment (a 500, and no record)."""

import http.client
import json
import socket

import arena.sdk as sdk


class Raw(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sdk.socket_path())


def agent_main(problem):
    bodies = [
        {"q": "widget", "page": "\u00b2"},
        {"q": "widget", "page": "1" * 5000},
        {"q": "widget", "page": "\u0663"},
        {"q": "widget", "page": 10**18},
        {"q": "widget", "page": 1, "price": "nan-inf"},
        {"q": "\u0000\uffff(", "page": 1, "service": ",,,"},
        {"q": 'AND OR "', "page": 1, "shop_id": ""},
    ]
    connection = Raw("x")
    statuses = []
    for body in bodies:
        connection.request("POST", "/tools/find_product", body=json.dumps(body).encode())
        response = connection.getresponse()
        response.read()
        statuses.append(response.status)
    print("STATUSES", statuses)
    sdk.tool("terminate", status="failure")
