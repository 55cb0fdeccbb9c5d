"""What replicas behind a load balancer agree on (one node is the case of one replica): the
knowledge commit each serves, syncs that reach every replica (a broadcast through the shared
state) and work done by one replica at a time. The state itself is :mod:`briefd.state`."""
