Nodes 128
Connections 3
127->0 id 1 start 0 size 2000000
95->0 id 2 start 40 size 250000
61->0 id 3 start 40 size 250000
