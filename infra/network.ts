/** One VPC with managed NAT, so the container, the Lambdas, Postgres and Redis share it. */
export const vpc = new sst.aws.Vpc('Vpc', { nat: 'managed', bastion: false });
