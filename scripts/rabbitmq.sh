#!/usr/bin/env bash
# Make sure a RabbitMQ answers at AMQP_URL's host and port (default: loopback, 5672) for the outbox relay's
# AMQP tests: found if one listens; otherwise, as root, installed (Debian's rabbitmq-server) and started;
# otherwise the exact commands are printed and the tests that need it fail rather than skip.
set -euo pipefail
# amqp://user:password@host:port/vhost
address=${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/%2F}
address=${address#*://}; address=${address#*@}; address=${address%%/*}
host=${address%:*}
port=${address##*:}
[ "$port" = "$address" ] && port=5672

listening() { (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; }

listening && exit 0
if { [ "$host" != "127.0.0.1" ] && [ "$host" != "localhost" ]; } || [ "$port" != "5672" ]; then
  echo "No RabbitMQ answers at $host:$port (AMQP_URL)." >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "The outbox relay's tests need RabbitMQ on $host:$port. As root:" >&2
  echo "  apt-get install -y rabbitmq-server && rabbitmq-server -detached" >&2
  exit 1
fi
if ! command -v rabbitmq-server >/dev/null; then
  echo "Installing rabbitmq-server (the outbox relay's AMQP tests publish to it)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rabbitmq-server
fi
echo "Starting RabbitMQ on $host:$port"
rabbitmq-server -detached
for _ in $(seq 1 120); do
  listening && exit 0
  sleep 0.5
done
echo "RabbitMQ did not start listening on $host:$port within a minute" >&2
exit 1
