import { type DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { ConnectionStore } from '../activities/connections';
import type { DatabaseHandle } from '../db/client';
import { AccountsModule } from './accounts/accounts.module';
import { AuthModule } from './auth/auth.module';
import { CatalogModule } from './catalog/catalog.module';
import { CONFIG, CONNECTIONS, DATABASE, IDENTITY, LOGGER, MASTER_KEY, TEMPORAL_CLIENTS } from './common/di';
import { ConnectionsModule } from './connections/connections.module';
import { ErrorFilter } from './common/error.filter';
import type { AppConfig } from './config';
import { HealthModule } from './health/health.module';
import type { Identity } from './identity/identity';
import { IdentityModule } from './identity/identity.module';
import { LimitsModule } from './limits/limits.module';
import { McpModule } from './mcp/mcp.module';
import type { Logger } from './logger';
import { OpenApiModule } from './openapi/openapi.module';
import { PluginsModule } from './plugins/plugins.module';
import { RunsModule } from './runs/runs.module';
import { SchedulesModule } from './schedules/schedules.module';
import type { TemporalClients } from './temporal-clients';
import { TemporalCodecModule } from './temporal-codec/temporal-codec.module';

export interface AppDependencies {
  config: AppConfig;
  logger: Logger;
  database: DatabaseHandle;
  temporal: TemporalClients;
  connections: ConnectionStore;
  masterKey: Buffer;
  identity: Identity;
}

/** What main.ts built, for every module of the API and of the login host. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(deps: AppDependencies): DynamicModule {
    const providers = [
      { provide: CONFIG, useValue: deps.config },
      { provide: LOGGER, useValue: deps.logger },
      { provide: DATABASE, useValue: deps.database },
      { provide: TEMPORAL_CLIENTS, useValue: deps.temporal },
      { provide: CONNECTIONS, useValue: deps.connections },
      { provide: MASTER_KEY, useValue: deps.masterKey },
      { provide: IDENTITY, useValue: deps.identity },
    ];
    return { module: CoreModule, providers, exports: providers.map((p) => p.provide) };
  }
}

@Module({})
export class AppModule {
  static forRoot(deps: AppDependencies): DynamicModule {
    return {
      module: AppModule,
      // Catalog before runs: /workflows/types must win over /workflows/:id.
      imports: [
        CoreModule.forRoot(deps),
        HealthModule,
        AuthModule,
        AccountsModule,
        LimitsModule,
        CatalogModule,
        RunsModule,
        SchedulesModule,
        PluginsModule,
        ConnectionsModule,
        IdentityModule,
        TemporalCodecModule,
        OpenApiModule,
        McpModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: ErrorFilter }],
    };
  }
}
